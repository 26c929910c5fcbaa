use super::*;

const MULTIPART: &str = "multipart/mixed; boundary=batch_1";

/// A body as OpenUI5's OData V4 model writes it: no space after the colons,
/// headers the service ignores, and a blank line after each request.
const UI5_BODY: &str = "--batch_1\r\nContent-Type:application/http\r\n\
Content-Transfer-Encoding:binary\r\n\r\n\
GET Items?$count=true&$skip=0&$top=100 HTTP/1.1\r\n\
Accept:application/json;odata.metadata=minimal;IEEE754Compatible=true\r\n\
Accept-Language:en\r\n\r\n\r\n\
--batch_1\r\nContent-Type:application/http\r\nContent-ID:two\r\n\r\n\
GET Items(3) HTTP/1.1\r\nPrefer:odata.maxpagesize=5\r\n\r\n\r\n\
--batch_1--\r\n";

#[test]
fn multipart_parts_become_requests_in_order() {
    let batch = parse_batch(MULTIPART, UI5_BODY.as_bytes(), 100).expect("reads");
    assert_eq!(batch.format, BatchFormat::Multipart);
    let urls: Vec<&str> = batch.requests.iter().map(|r| r.url.as_str()).collect();
    assert_eq!(urls, ["Items?$count=true&$skip=0&$top=100", "Items(3)"]);
    assert_eq!(batch.requests[0].id, None);
    assert_eq!(batch.requests[1].id.as_deref(), Some("two"));
    assert_eq!(
        batch.requests[1].header("prefer"),
        Some("odata.maxpagesize=5")
    );
    assert!(batch.requests.iter().all(|r| r.method == "GET"));
}

#[test]
fn a_change_set_is_read_as_one_request_that_is_no_read() {
    let body = "--batch_1\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n\
--cs\r\nContent-Type: application/http\r\n\r\nPOST Items HTTP/1.1\r\n\r\n{}\r\n--cs--\r\n\
--batch_1\r\nContent-Type: application/http\r\n\r\nDELETE Items(1) HTTP/1.1\r\n\r\n\r\n\
--batch_1--\r\n";
    let batch = parse_batch(MULTIPART, body.as_bytes(), 100).expect("reads");
    let methods: Vec<&str> = batch.requests.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(methods, [CHANGESET, "DELETE"]);
}

#[test]
fn json_requests_keep_their_ids_and_headers() {
    let body = r#"{"requests":[{"id":"r1","method":"get","url":"Items?$top=1",
        "headers":{"Prefer":"odata.maxpagesize=1"}},{"id":"r2","method":"POST","url":"Items"}]}"#;
    let batch = parse_batch("application/json", body.as_bytes(), 100).expect("reads");
    assert_eq!(batch.format, BatchFormat::Json);
    assert_eq!(batch.requests[0].id.as_deref(), Some("r1"));
    assert_eq!(batch.requests[0].method, "GET");
    assert_eq!(
        batch.requests[0].header("prefer"),
        Some("odata.maxpagesize=1")
    );
    assert_eq!(batch.requests[1].method, "POST");
}

#[test]
fn more_requests_than_allowed_are_refused() {
    assert_eq!(
        parse_batch(MULTIPART, UI5_BODY.as_bytes(), 1),
        Err(BatchError::TooMany(1))
    );
    let one = r#"{"id":"x","method":"GET","url":"Items"}"#;
    let body = format!(r#"{{"requests":[{one},{one},{one}]}}"#);
    assert_eq!(
        parse_batch("application/json", body.as_bytes(), 2),
        Err(BatchError::TooMany(2))
    );
}

#[test]
fn malformed_bodies_and_content_types_are_errors_not_panics() {
    for content_type in [
        "text/plain",
        "multipart/mixed",
        "multipart/form-data; boundary=b",
        "nonsense",
    ] {
        assert_eq!(
            parse_batch(content_type, UI5_BODY.as_bytes(), 100),
            Err(BatchError::ContentType),
            "{content_type}"
        );
    }
    let bodies: &[&[u8]] = &[
        b"",
        b"--batch_1\r\nContent-Type: application/http\r\n\r\nnot a request line\r\n--batch_1--\r\n",
        b"--batch_1\r\nContent-Type: text/plain\r\n\r\nGET Items HTTP/1.1\r\n\r\n--batch_1--\r\n",
        b"--batch_1\r\nContent-Type: application/http\r\n\r\nGET Items HTTP/1.1\r\n",
        b"\xff\xfe--batch_1",
    ];
    for body in bodies {
        assert!(
            matches!(
                parse_batch(MULTIPART, body, 100),
                Err(BatchError::Malformed(_))
            ),
            "{}",
            String::from_utf8_lossy(body)
        );
    }
    for body in [
        r#"{"requests":[{"method":"GET","url":"Items"}]}"#,
        "[]",
        "{",
    ] {
        assert!(
            matches!(
                parse_batch("application/json", body.as_bytes(), 100),
                Err(BatchError::Malformed(_))
            ),
            "{body}"
        );
    }
}
