//! The transcoder on a small catalog written by hand; the imported catalog of every
//! built-in kind is checked against an independent encoder in the server's tests.

use serde_json::{Map, Value, json};

use super::*;

const fn field(
    json: &'static str,
    number: u32,
    ty: FieldType,
    label: Label,
    keep_zero: bool,
) -> Field {
    Field {
        json,
        number,
        ty,
        label,
        keep_zero,
    }
}

use FieldType::{Bool, Bytes, Int32, Int64, Message as M, String as S};
use Label::{Inline, Map as Mp, Optional as O, Repeated as R};

static MESSAGES: [Message; 10] = [
    // 0
    Message {
        name: "test.Thing",
        shape: Shape::Object,
        fields: &[
            field("metadata", 1, M(1), O, false),
            field("spec", 2, M(3), O, false),
            field("data", 3, S, Mp, false),
            field("binaryData", 4, Bytes, Mp, false),
            field("immutable", 5, Bool, O, true),
        ],
    },
    // 1
    Message {
        name: "test.ObjectMeta",
        shape: Shape::Object,
        fields: &[
            field("name", 1, S, O, false),
            field("namespace", 3, S, O, false),
            field("generation", 7, Int64, O, false),
            field("creationTimestamp", 8, M(2), O, false),
            field("labels", 11, S, Mp, false),
            field("finalizers", 14, S, R, false),
        ],
    },
    // 2
    Message {
        name: "test.Time",
        shape: Shape::Time,
        fields: &[
            field("seconds", 1, Int64, O, true),
            field("nanos", 2, Int32, O, true),
        ],
    },
    // 3
    Message {
        name: "test.Spec",
        shape: Shape::Object,
        fields: &[
            field("replicas", 1, Int32, O, true),
            field("minReadySeconds", 2, Int32, O, false),
            field("port", 3, M(4), O, false),
            field("limits", 4, M(5), Mp, false),
            field("source", 5, M(6), Inline, false),
            field("ports", 6, Int32, R, false),
            field("extra", 7, M(7), Mp, false),
            field("raw", 8, M(8), O, false),
        ],
    },
    // 4
    Message {
        name: "test.IntOrString",
        shape: Shape::IntOrString,
        fields: &[
            field("type", 1, Int64, O, true),
            field("intVal", 2, Int32, O, true),
            field("strVal", 3, S, O, true),
        ],
    },
    // 5
    Message {
        name: "test.Quantity",
        shape: Shape::Quantity,
        fields: &[field("string", 1, S, O, true)],
    },
    // 6: inlined into Spec
    Message {
        name: "test.Source",
        shape: Shape::Object,
        fields: &[
            field("hostPath", 1, S, O, false),
            field("emptyDir", 2, Bool, O, false),
        ],
    },
    // 7
    Message {
        name: "test.ExtraValue",
        shape: Shape::Items,
        fields: &[field("items", 1, S, R, false)],
    },
    // 8
    Message {
        name: "test.RawExtension",
        shape: Shape::RawJson,
        fields: &[field("raw", 1, Bytes, O, true)],
    },
    // 9
    Message {
        name: "test.ThingList",
        shape: Shape::Object,
        fields: &[
            field("metadata", 1, M(1), O, false),
            field("items", 2, M(0), R, false),
        ],
    },
];

static CATALOG: Catalog = Catalog {
    messages: &MESSAGES,
    kinds: &[KindMessage {
        group: "test",
        version: "v1",
        kind: "Thing",
        message: 0,
    }],
};

fn thing() -> &'static Message {
    CATALOG.kind("test", "v1", "Thing").unwrap()
}

fn encode(v: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    encode::encode(&CATALOG, thing(), v.as_object().unwrap(), &mut out).unwrap();
    out
}

fn decode(bytes: &[u8]) -> Decoded {
    decode::decode(&CATALOG, thing(), bytes).unwrap()
}

#[test]
fn objects_go_to_protobuf_and_back_unchanged() {
    let obj = json!({
        "metadata": {
            "name": "a", "namespace": "ns", "generation": 3,
            "creationTimestamp": "2024-05-06T07:08:09Z",
            "labels": {"b": "2", "a": "1"},
            "finalizers": ["x", "y"]
        },
        "spec": {
            "replicas": 0,
            "port": "http",
            "limits": {"cpu": "500m", "memory": "1Gi"},
            "hostPath": "/data",
            "ports": [80, -1, 443],
            "extra": {"k": ["v1", "v2"]},
            "raw": {"any": ["json", 1, null]}
        },
        "data": {"k": "v", "empty": ""},
        "binaryData": {"bin": "AAEC/w=="},
        "immutable": false
    });
    let bytes = encode(&obj);
    let back = decode(&bytes);
    assert_eq!(Value::Object(back.object), obj);
    assert!(back.unknown.is_empty());
    // Deterministic: the same object gives the same bytes.
    assert_eq!(encode(&obj), bytes);
    let int_port = json!({"spec": {"port": 8080}});
    assert_eq!(Value::Object(decode(&encode(&int_port)).object), int_port);
}

#[test]
fn a_list_of_encoded_items_is_the_whole_list_encoded() {
    let items: Vec<Value> = (0..3)
        .map(|i| json!({"metadata": {"name": format!("t{i}")}, "data": {"k": "v".repeat(100 * i)}}))
        .collect();
    let metadata = json!({"name": "list"});
    let list = json!({"metadata": metadata, "items": items});
    let message = &MESSAGES[9];
    let mut whole = Vec::new();
    let mark = envelope::begin_wrap("test/v1", "ThingList", &mut whole);
    encode::encode(&CATALOG, message, list.as_object().unwrap(), &mut whole).unwrap();
    envelope::end_wrap(&mut whole, mark);

    let encoded: Vec<Vec<u8>> = items.iter().map(encode).collect();
    let fields = json!({"metadata": metadata});
    let lens = encoded.iter().map(Vec::len);
    let frame = encode::enveloped_list_frame(
        &CATALOG,
        message,
        ("test/v1", "ThingList"),
        fields.as_object().unwrap(),
        lens.clone(),
    )
    .unwrap()
    .unwrap();
    let mut parts = frame.head.clone();
    for item in &encoded {
        wire::bytes_field(&mut parts, frame.items_field, item);
    }
    parts.extend_from_slice(&frame.tail);
    assert_eq!(parts, whole);
    // A message whose last field is not its items has no frame.
    let thing_list = ("test/v1", "Thing");
    let framed = encode::enveloped_list_frame(&CATALOG, thing(), thing_list, &Map::new(), lens);
    assert_eq!(framed, Ok(None));
}

/// Embedded JSON is parsed and written again on every trip: a float must come back
/// as the same number (these four each changed by one ULP before serde_json's
/// `float_roundtrip`; the fuzz target found the first such input).
#[test]
fn floats_in_embedded_json_survive_round_trips() {
    for f in [
        1.0715660391465826e-75,
        -1.81996730402717e-179,
        -1.603964615428183e+143,
        -9.643915712060552e-234,
    ] {
        let obj = json!({"spec": {"raw": {"f": f}}});
        let once = Value::Object(decode(&encode(&obj)).object);
        let twice = Value::Object(decode(&encode(&once)).object);
        assert_eq!(once, obj);
        assert_eq!(twice, obj);
    }
}

#[test]
fn go_zero_values_are_dropped_unless_go_keeps_them() {
    // What a Go client writes for a Thing it set only `name` and `replicas: 0` of:
    // every plain field present with its zero value.
    let mut body = Vec::new();
    let mut meta = Vec::new();
    wire::bytes_field(&mut meta, 1, b"a");
    wire::bytes_field(&mut meta, 3, b"");
    wire::varint_field(&mut meta, 7, 0);
    wire::bytes_field(&mut meta, 8, b""); // a zero Time: an empty message
    wire::bytes_field(&mut body, 1, &meta);
    let mut spec = Vec::new();
    wire::varint_field(&mut spec, 1, 0);
    wire::varint_field(&mut spec, 2, 0);
    wire::bytes_field(&mut spec, 5, b""); // the inlined struct, always written
    wire::bytes_field(&mut body, 2, &spec);
    wire::varint_field(&mut body, 5, 0);
    assert_eq!(
        Value::Object(decode(&body).object),
        json!({"metadata": {"name": "a"}, "spec": {"replicas": 0}, "immutable": false})
    );
}

#[test]
fn unknown_fields_are_reported_with_where_they_were() {
    let mut spec = Vec::new();
    wire::varint_field(&mut spec, 1, 2);
    wire::varint_field(&mut spec, 40, 7);
    wire::varint_field(&mut spec, 41, 0); // a zero: what a newer client writes when unset
    let mut body = Vec::new();
    wire::bytes_field(&mut body, 2, &spec);
    wire::bytes_field(&mut body, 9, b"x");
    let d = decode(&body);
    assert_eq!(
        d.object,
        json!({"spec": {"replicas": 2}})
            .as_object()
            .unwrap()
            .clone()
    );
    let unknown: Vec<String> = d.unknown.iter().map(ToString::to_string).collect();
    assert_eq!(
        unknown,
        [
            "unknown field number 40 in \"spec\"",
            "unknown field number 9"
        ]
    );
}

#[test]
fn bad_bytes_are_errors_not_panics() {
    let obj = json!({"metadata": {"name": "a", "labels": {"k": "v"}}, "spec": {"replicas": 3}});
    let bytes = encode(&obj);
    for cut in 0..bytes.len() {
        // Every prefix decodes or fails; none panics.
        let _ = decode::decode(&CATALOG, thing(), &bytes[..cut]);
    }
    // A string where a number belongs.
    let mut body = Vec::new();
    wire::bytes_field(&mut body, 5, b"yes");
    let e = decode::decode(&CATALOG, thing(), &body).unwrap_err();
    assert_eq!(e.message, "proto: wrong wireType = 2 for field immutable");
}

#[test]
fn deep_nesting_is_bounded() {
    static DEEP: [Message; 1] = [Message {
        name: "test.Deep",
        shape: Shape::Object,
        fields: &[field("next", 1, M(0), O, false)],
    }];
    static DEEP_CATALOG: Catalog = Catalog {
        messages: &DEEP,
        kinds: &[],
    };
    let mut nested = Vec::new();
    for _ in 0..(decode::MAX_DEPTH + 5) {
        let mut outer = Vec::new();
        wire::bytes_field(&mut outer, 1, &nested);
        nested = outer;
    }
    let e = decode::decode(&DEEP_CATALOG, &DEEP[0], &nested).unwrap_err();
    assert_eq!(e.message, "exceeded max depth of 128 nested messages");
}

#[test]
fn values_that_do_not_fit_are_named() {
    let mut out = Vec::new();
    let e = encode::encode(
        &CATALOG,
        thing(),
        json!({"spec": {"replicas": "three"}}).as_object().unwrap(),
        &mut out,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "spec.replicas: expected an integer, found a string"
    );
    let e = encode::encode(
        &CATALOG,
        thing(),
        json!({"metadata": {"finalizers": ["a", 3]}})
            .as_object()
            .unwrap(),
        &mut out,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "metadata.finalizers[1]: expected a string, found a number"
    );
}
