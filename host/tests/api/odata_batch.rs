//! `POST /odata/$batch` in both formats: each inner GET answers exactly what
//! the same GET answers alone (status, OData headers, body), in order, with
//! its Content-ID or id; requests that are no reads get 405 in their part;
//! malformed, oversized and overlong batches 400; a guest's parts over a
//! non-public set 401; a batch from another site's page 403.

use rocket::http::{ContentType, Header, Status};
use serde_json::{json, Value};

use crate::helpers::TestApp;
use crate::odata_fixture::{spawn_fixture, spawn_fixture_with};

/// Request headers, as (name, value).
type Headers<'a> = &'a [(&'a str, &'a str)];

/// One request of a batch: Content-ID, method, URL and headers.
type Sent<'a> = (&'a str, &'a str, &'a str, Headers<'a>);

/// Reads of every kind, with their Content-IDs, as URLs relative to the
/// service root: a collection with options, one entity, a count, a 404, a
/// 400 and a page-size preference.
const READS: &[(&str, &str, Headers<'static>)] = &[
    (
        "list",
        "Things?$filter=qty%20gt%202&$orderby=name%20desc&$select=name,qty&$top=4&$count=true",
        &[],
    ),
    ("one", "Things(2)?$expand=category", &[]),
    ("count", "Things/$count?$filter=active%20eq%20true", &[]),
    ("missing", "Nowhere", &[]),
    ("bad", "Things?$top=-1", &[]),
    ("paged", "Categories", &[("Prefer", "odata.maxpagesize=2")]),
    ("nav", "Colours('red')/things?$select=id", &[]),
    (
        "grouped",
        "Things?$apply=groupby((colour_code),aggregate(qty%20with%20sum%20as%20Total,$count%20as%20N))",
        &[],
    ),
    (
        "numbers",
        "Things?$select=id,price,qty&$top=3",
        &[("Accept", "application/json;IEEE754Compatible=true")],
    ),
];

/// One answered part of a batch.
#[derive(Debug)]
struct Part {
    id: Option<String>,
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Part {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A multipart batch body of `requests` (Content-ID, method, URL, headers).
fn multipart_body(requests: &[Sent<'_>]) -> String {
    let mut body = String::new();
    for (id, method, url, headers) in requests {
        body +=
            "--batch_x\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n";
        body += &format!("Content-ID: {id}\r\n\r\n{method} {url} HTTP/1.1\r\n");
        for (name, value) in *headers {
            body += &format!("{name}: {value}\r\n");
        }
        body += "\r\n\r\n";
    }
    body + "--batch_x--\r\n"
}

/// Posts `body` as a batch; answers the outer status, content type and body.
async fn post_batch(
    app: &TestApp,
    content_type: &str,
    body: String,
    headers: &[(&str, &str)],
) -> (Status, String, Vec<u8>) {
    let mut request = app
        .client
        .post("/odata/$batch")
        .header(ContentType::parse_flexible(content_type).expect("a content type"))
        .body(body);
    for (name, value) in headers {
        request = request.header(Header::new(name.to_string(), value.to_string()));
    }
    let response = request.dispatch().await;
    let status = response.status();
    let content_type = response
        .headers()
        .get_one("Content-Type")
        .unwrap_or_default()
        .to_owned();
    (
        status,
        content_type,
        response.into_bytes().await.unwrap_or_default(),
    )
}

/// The parts of a multipart batch answer.
async fn parts(content_type: &str, body: Vec<u8>) -> Vec<Part> {
    let boundary = content_type
        .split("boundary=")
        .nth(1)
        .unwrap_or_else(|| panic!("no boundary in {content_type}"));
    let chunk: Result<Vec<u8>, std::io::Error> = Ok(body);
    let mut multipart = multer::Multipart::new(futures::stream::once(async { chunk }), boundary);
    let mut parts = Vec::new();
    while let Some(field) = multipart.next_field().await.expect("a multipart answer") {
        assert_eq!(
            field.content_type().map(ToString::to_string).as_deref(),
            Some("application/http")
        );
        let id = field
            .headers()
            .get("content-id")
            .map(|v| v.to_str().expect("ascii").to_owned());
        let bytes = field.bytes().await.expect("the part");
        let mut slots = [httparse::EMPTY_HEADER; 16];
        let mut response = httparse::Response::new(&mut slots);
        let httparse::Status::Complete(head) = response.parse(&bytes).expect("an HTTP answer")
        else {
            panic!("a partial HTTP answer");
        };
        let headers: Vec<(String, String)> = response
            .headers
            .iter()
            .map(|h| {
                (
                    h.name.to_owned(),
                    String::from_utf8_lossy(h.value).into_owned(),
                )
            })
            .collect();
        let body = String::from_utf8(bytes[head..].to_vec()).expect("UTF-8");
        let part = Part {
            id,
            status: response.code.expect("a status"),
            headers,
            body,
        };
        let length: usize = part
            .header("Content-Length")
            .expect("Content-Length")
            .parse()
            .expect("a length");
        assert_eq!(length, part.body.len(), "{part:?}");
        parts.push(part);
    }
    parts
}

/// The same request sent alone.
async fn alone(
    app: &TestApp,
    url: &str,
    headers: &[(&str, &str)],
    outer: &[(&str, &str)],
) -> crate::odata_fixture::Answer {
    let all: Vec<(&str, &str)> = headers.iter().chain(outer).copied().collect();
    app.get_uri(&format!("/odata/{url}"), &all).await
}

#[rocket::async_test]
async fn a_multipart_batch_answers_each_read_as_it_is_answered_alone() {
    let app = spawn_fixture().await;
    let requests: Vec<_> = READS
        .iter()
        .map(|(id, url, h)| (*id, "GET", *url, *h))
        .collect();
    let (status, content_type, body) = post_batch(
        &app,
        "multipart/mixed; boundary=batch_x",
        multipart_body(&requests),
        &[],
    )
    .await;
    assert_eq!(status, Status::Ok);
    assert!(
        content_type.starts_with("multipart/mixed; boundary="),
        "{content_type}"
    );
    let parts = parts(&content_type, body).await;
    assert_eq!(parts.len(), READS.len());
    for ((id, url, headers), part) in READS.iter().zip(&parts) {
        let single = alone(&app, url, headers, &[]).await;
        assert_eq!(part.id.as_deref(), Some(*id));
        assert_eq!(part.status, single.status.code, "{url}: {}", part.body);
        assert_eq!(part.body, single.body, "{url}");
        for name in ["Content-Type", "OData-Version", "Preference-Applied"] {
            assert_eq!(part.header(name), single.header(name), "{url}: {name}");
        }
    }
    let status = |id: &str| {
        parts
            .iter()
            .find(|p| p.id.as_deref() == Some(id))
            .map(|p| p.status)
    };
    assert_eq!(
        (status("list"), status("missing"), status("bad")),
        (Some(200), Some(404), Some(400))
    );
    assert_eq!(
        parts[5].header("Preference-Applied"),
        Some("odata.maxpagesize=2")
    );
    assert!(
        parts[5].body.contains("@odata.nextLink"),
        "{}",
        parts[5].body
    );
}

#[rocket::async_test]
async fn a_json_batch_answers_each_read_as_it_is_answered_alone() {
    let app = spawn_fixture().await;
    let requests: Vec<Value> = READS
        .iter()
        .map(|(id, url, headers)| {
            let headers: serde_json::Map<String, Value> = headers
                .iter()
                .map(|(n, v)| (n.to_string(), json!(v)))
                .collect();
            json!({"id": id, "method": "GET", "url": url, "headers": headers})
        })
        .collect();
    let body = json!({ "requests": requests }).to_string();
    let (status, content_type, body) = post_batch(&app, "application/json", body, &[]).await;
    assert_eq!(status, Status::Ok);
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    let answer: Value = serde_json::from_slice(&body).expect("a JSON answer");
    let responses = answer["responses"].as_array().expect("responses");
    assert_eq!(responses.len(), READS.len());
    for ((id, url, headers), response) in READS.iter().zip(responses) {
        let single = alone(&app, url, headers, &[]).await;
        assert_eq!(response["id"], json!(id));
        assert_eq!(response["status"], json!(single.status.code), "{url}");
        let expected = match serde_json::from_str::<Value>(&single.body) {
            Ok(value) if !url.contains("/$count") => value,
            _ => json!(single.body),
        };
        assert_eq!(response["body"], expected, "{url}");
        assert_eq!(response["headers"]["odata-version"], json!("4.0"));
        assert_eq!(
            response["headers"]["content-type"].as_str(),
            single.header("Content-Type"),
            "{url}"
        );
        assert_eq!(
            response["headers"]["preference-applied"].as_str(),
            single.header("Preference-Applied"),
            "{url}"
        );
    }
}

#[rocket::async_test]
async fn requests_that_are_no_reads_get_405_in_their_part() {
    let app = spawn_fixture().await;
    let changeset =
        "--batch_x\r\nContent-Type: multipart/mixed; boundary=cs\r\nContent-ID: cs\r\n\r\n\
        --cs\r\nContent-Type: application/http\r\n\r\nPOST Things HTTP/1.1\r\n\
        Content-Type: application/json\r\n\r\n{\"id\":99}\r\n--cs--\r\n";
    let body = multipart_body(&[
        ("1", "POST", "Things", &[]),
        ("2", "GET", "Things(1)", &[]),
        ("3", "DELETE", "Things(1)", &[]),
    ]);
    let body = body.replace("--batch_x--\r\n", &format!("{changeset}--batch_x--\r\n"));
    let (status, content_type, body) =
        post_batch(&app, "multipart/mixed; boundary=batch_x", body, &[]).await;
    assert_eq!(status, Status::Ok);
    let statuses: Vec<(Option<String>, u16)> = parts(&content_type, body)
        .await
        .into_iter()
        .map(|p| (p.id, p.status))
        .collect();
    let id = |s: &str| Some(s.to_owned());
    assert_eq!(
        statuses,
        [
            (id("1"), 405),
            (id("2"), 200),
            (id("3"), 405),
            (id("cs"), 405)
        ]
    );
    // Nothing was written.
    assert_eq!(app.odata("Things(99)").await.status, Status::NotFound);
    assert_eq!(app.odata("Things(1)").await.status, Status::Ok);
    let json = r#"{"requests":[{"id":"a","method":"PATCH","url":"Things(1)","body":{}}]}"#;
    let (_, _, body) = post_batch(&app, "application/json", json.into(), &[]).await;
    let answer: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(answer["responses"][0]["status"], json!(405));
    assert_eq!(
        answer["responses"][0]["body"]["error"]["code"],
        json!("method_not_allowed")
    );
}

#[rocket::async_test]
async fn malformed_oversized_and_overlong_batches_are_400() {
    let app = spawn_fixture_with(|f| f.merge(("odata.batch_max", 3))).await;
    let one = ("x", "GET", "Things", &[][..]);
    let cases: Vec<(&str, String, &str)> = vec![
        ("multipart/mixed; boundary=batch_x", "not a batch".into(), "invalid_batch"),
        ("multipart/mixed", multipart_body(&[one]), "invalid_batch"),
        ("text/plain", "GET Things".into(), "invalid_batch"),
        (
            "multipart/mixed; boundary=batch_x",
            "--batch_x\r\nContent-Type: application/http\r\n\r\nGARBAGE\r\n--batch_x--\r\n".into(),
            "invalid_batch",
        ),
        ("application/json", r#"{"requests":[{"url":"Things"}]}"#.into(), "invalid_batch"),
        ("application/json", "{".into(), "invalid_batch"),
        (
            "multipart/mixed; boundary=batch_x",
            multipart_body(&[one, one, one, one]),
            "batch_too_large",
        ),
        (
            "multipart/mixed; boundary=batch_x",
            format!("--batch_x\r\nContent-Type: application/http\r\n\r\nGET Things HTTP/1.1\r\nX: {}\r\n\r\n--batch_x--\r\n", "a".repeat(1024 * 1024)),
            "invalid_batch",
        ),
    ];
    for (content_type, body, code) in cases {
        let shown = body.chars().take(80).collect::<String>();
        let (status, answer_type, body) = post_batch(&app, content_type, body, &[]).await;
        assert_eq!(status, Status::BadRequest, "{content_type} {shown}");
        assert!(answer_type.starts_with("application/json"), "{answer_type}");
        let error: Value = serde_json::from_slice(&body).expect("the OData error shape");
        assert_eq!(
            error["error"]["code"],
            json!(code),
            "{content_type} {shown}: {error}"
        );
    }
    // Three requests are still a batch.
    let (status, ..) = post_batch(
        &app,
        "multipart/mixed; boundary=batch_x",
        multipart_body(&[one, one, one]),
        &[],
    )
    .await;
    assert_eq!(status, Status::Ok);
}

#[rocket::async_test]
async fn a_batch_reads_as_its_caller_and_not_across_sites() {
    let app = spawn_fixture().await;
    let body = || multipart_body(&[("u", "GET", "Users", &[]), ("t", "GET", "Things(1)", &[])]);
    let batch_type = "multipart/mixed; boundary=batch_x";
    // A guest may read the public set, not `Users`.
    let (status, content_type, answer) = post_batch(&app, batch_type, body(), &[]).await;
    assert_eq!(status, Status::Ok);
    let statuses: Vec<u16> = parts(&content_type, answer)
        .await
        .iter()
        .map(|p| p.status)
        .collect();
    assert_eq!(statuses, [401, 200]);
    // Signed in, the same batch reads `Users` as the standalone GET does.
    let id = app
        .create_user_with_organisation("reader@example.com", crate::helpers::PASSWORD)
        .await;
    assert_eq!(
        app.login("reader@example.com", crate::helpers::PASSWORD)
            .await,
        Status::Ok
    );
    let (_, content_type, answer) = post_batch(&app, batch_type, body(), &[]).await;
    let users = &parts(&content_type, answer).await[0];
    assert_eq!(users.status, 200, "{}", users.body);
    assert_eq!(users.body, alone(&app, "Users", &[], &[]).await.body);
    assert!(
        users.body.contains(&format!("\"id\":{id}")),
        "{}",
        users.body
    );
    // A browser posting from another site's page is refused as a whole.
    for headers in [
        &[("Sec-Fetch-Site", "cross-site")][..],
        &[("Origin", "https://evil.example")][..],
    ] {
        let (status, _, answer) = post_batch(&app, batch_type, body(), headers).await;
        assert_eq!(status, Status::Forbidden, "{headers:?}");
        let error: Value = serde_json::from_slice(&answer).expect("the OData error shape");
        assert_eq!(error["error"]["code"], json!("cross_origin"));
    }
    let same_site = [("Sec-Fetch-Site", "same-origin")];
    let (status, ..) = post_batch(&app, batch_type, body(), &same_site).await;
    assert_eq!(status, Status::Ok);
}

#[rocket::async_test]
async fn absolute_urls_on_this_service_are_read_and_others_are_404() {
    let app = spawn_fixture().await;
    let base = crate::helpers::BASE_URL;
    let own = format!("{base}/odata/Things(1)");
    let body = multipart_body(&[
        ("abs", "GET", &own, &[]),
        ("path", "GET", "/odata/Things(1)", &[]),
        (
            "foreign",
            "GET",
            "https://elsewhere.example/odata/Things(1)",
            &[],
        ),
        ("outside", "GET", "/login", &[]),
    ]);
    let (_, content_type, answer) =
        post_batch(&app, "multipart/mixed; boundary=batch_x", body, &[]).await;
    let parts = parts(&content_type, answer).await;
    let single = app.odata("Things(1)").await;
    assert_eq!((parts[0].status, &parts[0].body), (200, &single.body));
    assert_eq!((parts[1].status, &parts[1].body), (200, &single.body));
    assert_eq!((parts[2].status, parts[3].status), (404, 404));
}
