//! ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding. Harmless once policies
//! are enforced: the policy matches gadgets.example.com, which nothing writes, and is
//! deleted before the binding is created; the binding names a policy that does not exist.

use crate::Kind;

/// The round trips.
pub const KINDS: &[Kind] = &[
    Kind {
        resource: "validatingadmissionpolicy.admissionregistration.k8s.io",
        name: "small-gadgets",
        yaml: "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\nmetadata:\n  name: small-gadgets\nspec:\n  paramKind:\n    apiVersion: example.com/v1\n    kind: GadgetLimit\n  matchConstraints:\n    resourceRules:\n    - apiGroups: [example.com]\n      apiVersions: [v1]\n      operations: [CREATE, UPDATE]\n      resources: [gadgets]\n  validations:\n  - expression: object.spec.size <= params.max\n    message: gadgets must be small\n",
        header: &["NAME", "VALIDATIONS", "PARAMKIND", "AGE"],
        row: &["small-gadgets", "1", "example.com/v1/GadgetLimit"],
        described: &[
            "Name:",
            "small-gadgets",
            "Kind: ValidatingAdmissionPolicy",
            "Failure Policy: Fail",
            "Match Policy: Equivalent",
            "object.spec.size <= params.max",
            "gadgets must be small",
        ],
        describe_since: 0,
    },
    Kind {
        resource: "validatingadmissionpolicybinding.admissionregistration.k8s.io",
        name: "small-gadgets-binding",
        yaml: "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicyBinding\nmetadata:\n  name: small-gadgets-binding\nspec:\n  policyName: absent-policy\n  validationActions: [Deny]\n  paramRef:\n    name: limits\n    namespace: gadgets\n    parameterNotFoundAction: Deny\n",
        header: &["NAME", "POLICYNAME", "PARAMREF", "AGE"],
        row: &["small-gadgets-binding", "absent-policy", "gadgets/limits"],
        described: &[
            "Name:",
            "small-gadgets-binding",
            "Kind: ValidatingAdmissionPolicyBinding",
            "Policy Name: absent-policy",
            "Validation Actions:",
            "Deny",
        ],
        describe_since: 0,
    },
];
