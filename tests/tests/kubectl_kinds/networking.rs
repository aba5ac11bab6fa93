//! EndpointSlice. IPAddress and ServiceCIDR are left out: the kubectl releases before
//! 1.33 that know them describe them by reading `networking.k8s.io/v1alpha1` or
//! `v1beta1`, which kube 1.35 does not serve by default and kapi does not serve, so
//! `kubectl describe` answers NotFound there as it does against kube.
//! `builtins_networking.rs` lists both with the kubectl on PATH instead.

use crate::Kind;

/// The round trips.
pub const KINDS: &[Kind] = &[Kind {
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
}];
