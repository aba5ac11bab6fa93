"""An APIService from YAML with the official Python `kubernetes` client.

Usage: python3 apiservices.py KUBECONFIG

Creates an APIService (and a ConfigMap beside it) from one YAML file with
`kubernetes.utils.create_from_yaml`, reads it back with ApiregistrationV1Api, and
creates it again to see kube's 409 (the client raises FailToCreateError). Prints one
JSON object summarising what it saw.
"""

import json
import sys
import tempfile

from kubernetes import client, config, utils

MANIFEST = """\
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.py.example.com
spec:
  group: py.example.com
  version: v1beta1
  groupPriorityMinimum: 2000
  versionPriority: 20
  service:
    namespace: default
    name: py-backend
    port: 8443
  insecureSkipTLSVerify: true
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: py-beside
  namespace: default
data:
  a: "1"
"""


def main():
    config.load_kube_config(sys.argv[1])
    api = client.ApiClient()
    summary = {}
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write(MANIFEST)
        f.flush()
        created = utils.create_from_yaml(api, f.name)
        summary["created"] = sorted(o.kind for group in created for o in group)
        read = client.ApiregistrationV1Api(api).read_api_service("v1beta1.py.example.com")
        summary["service"] = f"{read.spec.service.namespace}/{read.spec.service.name}:{read.spec.service.port}"
        summary["priorities"] = [read.spec.group_priority_minimum, read.spec.version_priority]
        try:
            utils.create_from_yaml(api, f.name)
            raise AssertionError("the second create should have failed")
        except utils.FailToCreateError as e:
            summary["second"] = sorted(
                [x.status, json.loads(x.body)["reason"], json.loads(x.body)["message"]]
                for x in e.api_exceptions
            )
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()
