//! EndpointSlice, IPAddress and ServiceCIDR. The kubectl releases before 1.33 describe
//! IPAddress and ServiceCIDR by reading `networking.k8s.io/v1alpha1` or `v1beta1`,
//! which kube 1.35 does not serve by default and kapi does not serve, so their
//! `describe` answers NotFound there as it does against kube: it is checked from 1.33.

use crate::Kind;

/// The round trips.
pub const KINDS: &[Kind] = &[
    Kind {
        resource: "endpointslice.discovery.k8s.io",
        name: "web-x1",
        yaml: "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: web-x1\n  labels:\n    kubernetes.io/service-name: web\naddressType: IPv4\nports:\n- name: http\n  port: 80\nendpoints:\n- addresses: [10.1.0.1]\n  nodeName: node-a\n- addresses: [10.1.0.2]\n",
        header: &["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"],
        row: &["web-x1", "IPv4", "80", "10.1.0.1,10.1.0.2"],
        described: &[
            "Name:",
            "web-x1",
            "AddressType:",
            "IPv4",
            "http",
            "80",
            "TCP",
            "10.1.0.1",
            "node-a",
        ],
        describe_since: 0,
    },
    Kind {
        resource: "ipaddress.networking.k8s.io",
        name: "10.3.0.7",
        yaml: "apiVersion: networking.k8s.io/v1\nkind: IPAddress\nmetadata:\n  name: 10.3.0.7\nspec:\n  parentRef:\n    resource: services\n    namespace: default\n    name: web\n",
        header: &["NAME", "PARENTREF", "AGE"],
        row: &["10.3.0.7", "services/default/web"],
        described: &["Name:", "10.3.0.7", "services", "web"],
        describe_since: 33,
    },
    Kind {
        resource: "servicecidr.networking.k8s.io",
        name: "extra",
        yaml: "apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata:\n  name: extra\nspec:\n  cidrs:\n  - 10.200.0.0/24\n",
        header: &["NAME", "CIDRS", "AGE"],
        row: &["extra", "10.200.0.0/24"],
        described: &["Name:", "extra", "10.200.0.0/24"],
        describe_since: 33,
    },
];
