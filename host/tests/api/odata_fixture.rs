//! The typed fixture the OData tests read, and how they talk to `/odata`.
//!
//! Three small tables are created on the test's own database before the host
//! ignites (configured sets read their columns from the schema then):
//! `things` — a column of every type the service maps, with nulls in each —
//! `categories` (a thing's to-one `category`, a category's to-many `items`)
//! and `colours` (a text key; a thing's to-one `colour`, a colour's to-many
//! `things`). The same rows are kept here in Rust, so a test computes what
//! a query must answer from [`THINGS`] instead of spelling results out.

use std::collections::BTreeSet;

use gatehouse::db::{Db, Dialect};
use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS, NON_ALPHANUMERIC};
use rocket::figment::providers::{Format, Toml};
use rocket::figment::Figment;
use rocket::http::{Header, Status};
use serde_json::Value;

use crate::helpers::{spawn_host_at, TestApp, TestDb, BASE_URL};

/// A predicate over fixture rows: which things a query should answer.
pub type Keep<'a> = &'a dyn Fn(&Thing) -> bool;

/// One row of `things`.
#[derive(Debug, Clone, Copy)]
pub struct Thing {
    pub id: i64,
    pub name: &'static str,
    pub note: Option<&'static str>,
    pub qty: Option<i64>,
    /// `DECIMAL(10,2)`, written with two decimals.
    pub price: Option<f64>,
    pub ratio: Option<f64>,
    pub active: Option<bool>,
    /// `YYYY-MM-DD`.
    pub born: Option<&'static str>,
    /// The instant, as the service must write it (RFC 3339, UTC, `Z`)…
    pub seen_at: Option<&'static str>,
    /// …and as SQLite stores it: several ISO 8601 spellings of that instant.
    pub seen_at_stored: Option<&'static str>,
    /// `HH:MM:SS`.
    pub opens: Option<&'static str>,
    /// Lower-case hyphenated GUID.
    pub uid: Option<&'static str>,
    pub category_id: Option<i64>,
    pub colour_code: Option<&'static str>,
}

/// One row of `categories`.
#[derive(Debug, Clone, Copy)]
pub struct Category {
    pub id: i64,
    pub name: &'static str,
    pub priority: Option<i64>,
}

/// One row of `colours` (keyed by `code`).
#[derive(Debug, Clone, Copy)]
pub struct Colour {
    pub code: &'static str,
    pub label: &'static str,
}

const NONE: Thing = Thing {
    id: 0,
    name: "",
    note: None,
    qty: None,
    price: None,
    ratio: None,
    active: None,
    born: None,
    seen_at: None,
    seen_at_stored: None,
    opens: None,
    uid: None,
    category_id: None,
    colour_code: None,
};

/// The rows of `things`, in key order.
pub const THINGS: &[Thing] = &[
    Thing {
        id: 1,
        name: "Apple",
        note: Some("red fruit"),
        qty: Some(5),
        price: Some(1.20),
        ratio: Some(0.5),
        active: Some(true),
        born: Some("2020-01-15"),
        seen_at: Some("2024-03-01T08:00:00Z"),
        seen_at_stored: Some("2024-03-01T08:00:00Z"),
        opens: Some("08:30:00"),
        uid: Some("0b5c3f0e-0000-4000-8000-000000000001"),
        category_id: Some(1),
        colour_code: Some("red"),
    },
    Thing {
        id: 2,
        name: "banana",
        qty: Some(12),
        price: Some(0.35),
        ratio: Some(1.25),
        active: Some(false),
        born: Some("2019-06-30"),
        seen_at: Some("2024-03-01T09:30:00Z"),
        seen_at_stored: Some("2024-03-01 09:30:00"),
        opens: Some("09:00:00"),
        category_id: Some(1),
        colour_code: Some("yellow"),
        ..NONE
    },
    Thing {
        id: 3,
        name: "Cherry",
        note: Some("100% sweet"),
        price: Some(12.50),
        active: Some(true),
        seen_at: Some("2024-03-01T10:00:00Z"),
        seen_at_stored: Some("2024-03-01T12:00:00+02:00"),
        uid: Some("0b5c3f0e-0000-4000-8000-000000000003"),
        category_id: Some(1),
        colour_code: Some("red"),
        ..NONE
    },
    Thing {
        id: 4,
        name: "date_palm",
        note: Some("under_score"),
        qty: Some(3),
        ratio: Some(2.0),
        born: Some("2021-12-31"),
        opens: Some("23:59:59"),
        category_id: Some(2),
        ..NONE
    },
    Thing {
        id: 5,
        name: "Elderberry",
        note: Some("it's tart"),
        qty: Some(0),
        price: Some(7.00),
        ratio: Some(-1.5),
        active: Some(false),
        born: Some("2020-02-29"),
        seen_at: Some("2023-12-31T23:59:59Z"),
        seen_at_stored: Some("2024-01-01T01:29:59+01:30"),
        opens: Some("00:00:00"),
        uid: Some("0b5c3f0e-0000-4000-8000-000000000005"),
        category_id: Some(2),
        colour_code: Some("navy blue"),
    },
    Thing {
        id: 6,
        name: "fig",
        note: Some("  padded  "),
        qty: Some(8),
        price: Some(3.33),
        ratio: Some(3.75),
        active: Some(true),
        born: Some("2018-07-04"),
        seen_at: Some("2024-03-02T00:15:00.25Z"),
        seen_at_stored: Some("2024-03-02 00:15:00.250"),
        opens: Some("12:15:30"),
        ..NONE
    },
    Thing {
        id: 7,
        name: "Grape",
        note: Some("Red or green"),
        qty: Some(20),
        price: Some(0.99),
        active: Some(true),
        born: Some("2022-05-05"),
        seen_at: Some("2024-02-29T18:45:10Z"),
        seen_at_stored: Some("2024-02-29T13:45:10-05:00"),
        opens: Some("18:45:00"),
        uid: Some("0b5c3f0e-0000-4000-8000-000000000007"),
        category_id: Some(3),
        colour_code: Some("it's"),
        ..NONE
    },
    Thing {
        id: 8,
        name: "honeydew",
        qty: Some(-4),
        price: Some(10.00),
        ratio: Some(0.1),
        active: Some(false),
        born: Some("2020-01-15"),
        seen_at: Some("2024-03-01T09:30:00Z"),
        seen_at_stored: Some("2024-03-01T09:30:00.000Z"),
        opens: Some("08:30:00"),
        category_id: Some(2),
        ..NONE
    },
    Thing {
        id: 9,
        name: "O'Brien's kiwi",
        note: Some("A&B"),
        ..NONE
    },
    Thing {
        id: 10,
        name: "lemon",
        note: Some("sour; yellow"),
        qty: Some(7),
        price: Some(2.50),
        ratio: Some(0.75),
        active: Some(true),
        born: Some("2023-01-01"),
        seen_at: Some("2022-06-15T12:00:00Z"),
        seen_at_stored: Some("2022-06-15 12:00"),
        opens: Some("07:05:09"),
        uid: Some("0b5c3f0e-0000-4000-8000-00000000000a"),
        category_id: Some(3),
        colour_code: Some("yellow"),
    },
];

/// The rows of `categories`, in key order; `Empty` has no items.
pub const CATEGORIES: &[Category] = &[
    Category {
        id: 1,
        name: "Fruit",
        priority: Some(2),
    },
    Category {
        id: 2,
        name: "Exotic",
        priority: None,
    },
    Category {
        id: 3,
        name: "Citrus",
        priority: Some(1),
    },
    Category {
        id: 4,
        name: "Empty",
        priority: Some(3),
    },
];

/// The rows of `colours`, in key order as both engines sort these codes.
pub const COLOURS: &[Colour] = &[
    Colour {
        code: "it's",
        label: "Quote",
    },
    Colour {
        code: "navy blue",
        label: "Navy",
    },
    Colour {
        code: "red",
        label: "Red",
    },
    Colour {
        code: "yellow",
        label: "Yellow",
    },
];

/// The configuration exposing the fixture: three public sets with their
/// navigations; `Things` is searchable by `name` and `note`.
pub const FIXTURE_SETS: &str = r#"
[odata.sets.Things]
table = "things"
public = true
searchable = ["name", "note"]
types = { uid = "Edm.Guid" }
navigation = { category = { target = "Categories", column = "category_id" }, colour = { target = "Colours", column = "colour_code" } }

[odata.sets.Categories]
table = "categories"
public = true
navigation = { items = { target = "Things", remote_column = "category_id" } }

[odata.sets.Colours]
table = "colours"
key = "code"
public = true
navigation = { things = { target = "Things", remote_column = "colour_code" } }
"#;

/// The ids of the things `keep` admits, in key order.
pub fn ids_where(keep: impl Fn(&Thing) -> bool) -> Vec<i64> {
    THINGS.iter().filter(|t| keep(t)).map(|t| t.id).collect()
}

/// Every thing's id, in key order.
pub fn all_ids() -> Vec<i64> {
    ids_where(|_| true)
}

/// The thing with key `id`.
pub fn thing(id: i64) -> &'static Thing {
    THINGS.iter().find(|t| t.id == id).expect("a fixture thing")
}

/// Whether `term` occurs in a searchable property of `t` (`name` or
/// `note`), ignoring case: what a `$search` word or phrase matches.
pub fn mentions(t: &Thing, term: &str) -> bool {
    let term = term.to_lowercase();
    t.name.to_lowercase().contains(&term)
        || t.note.is_some_and(|n| n.to_lowercase().contains(&term))
}

/// The category of `t`, if it has one.
pub fn category_of(t: &Thing) -> Option<&'static Category> {
    t.category_id
        .map(|id| CATEGORIES.iter().find(|c| c.id == id).expect("category"))
}

/// The colour of `t`, if it has one.
pub fn colour_of(t: &Thing) -> Option<&'static Colour> {
    t.colour_code
        .map(|code| COLOURS.iter().find(|c| c.code == code).expect("colour"))
}

/// The ids of the things in category `id`, in key order.
pub fn items_of(id: i64) -> Vec<i64> {
    ids_where(|t| t.category_id == Some(id))
}

/// The reference host with the fixture's sets (and `configure`'s extra
/// configuration) on a fresh database holding the fixture.
pub async fn spawn_fixture_with(configure: impl FnOnce(Figment) -> Figment) -> TestApp {
    let database = TestDb::new().await;
    create_fixture(&database.url).await;
    spawn_host_at(database, |figment| {
        gatehouse_host::rocket(configure(figment.merge(Toml::string(FIXTURE_SETS))))
    })
    .await
}

/// [`spawn_fixture_with`] with no extra configuration.
pub async fn spawn_fixture() -> TestApp {
    spawn_fixture_with(|f| f).await
}

/// Creates and fills the fixture's tables on the database at `url`.
async fn create_fixture(url: &str) {
    let db = Db::connect(url).await.expect("fixture database");
    let dialect = db.dialect();
    for sql in tables(dialect) {
        db.execute(db.query(sql))
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    for sql in rows(dialect) {
        db.execute(sqlx::query(&db.dialect().placeholders(&sql)))
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    db.close().await;
}

fn tables(dialect: Dialect) -> [&'static str; 3] {
    match dialect {
        Dialect::Postgres => [
            "CREATE TABLE categories (id BIGINT PRIMARY KEY, name TEXT NOT NULL, priority INTEGER)",
            "CREATE TABLE colours (code TEXT PRIMARY KEY, label TEXT NOT NULL)",
            "CREATE TABLE things (id BIGINT PRIMARY KEY, name TEXT NOT NULL, note TEXT, \
             qty INTEGER, price NUMERIC(10,2), ratio DOUBLE PRECISION, active BOOLEAN, \
             born DATE, seen_at TIMESTAMPTZ, opens TIME, uid UUID, \
             category_id BIGINT REFERENCES categories (id), \
             colour_code TEXT REFERENCES colours (code))",
        ],
        Dialect::MySql => [
            "CREATE TABLE categories (id BIGINT PRIMARY KEY, name VARCHAR(100) NOT NULL, \
             priority INT)",
            "CREATE TABLE colours (code VARCHAR(32) PRIMARY KEY, label VARCHAR(100) NOT NULL)",
            // `name` compares with case, `note` without (the default
            // collation): filters must respect case and $search ignore it
            // on both, whatever the collation says.
            "CREATE TABLE things (id BIGINT PRIMARY KEY, \
             name VARCHAR(100) COLLATE utf8mb4_bin NOT NULL, note TEXT, \
             qty INT, price DECIMAL(10,2), ratio DOUBLE, active BOOLEAN, \
             born DATE, seen_at DATETIME(3), opens TIME, uid CHAR(36), \
             category_id BIGINT REFERENCES categories (id), \
             colour_code VARCHAR(32) REFERENCES colours (code))",
        ],
        Dialect::Sqlite => [
            "CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL, priority INTEGER)",
            "CREATE TABLE colours (code TEXT PRIMARY KEY, label TEXT NOT NULL)",
            "CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT NOT NULL, note TEXT, \
             qty INTEGER, price DECIMAL(10,2), ratio REAL, active BOOLEAN, \
             born DATE, seen_at DATETIME, opens TIME, uid TEXT, \
             category_id INTEGER REFERENCES categories (id), \
             colour_code TEXT REFERENCES colours (code))",
        ],
        _ => unreachable!("an engine the suite does not know"),
    }
}

/// The fixture's rows as `INSERT` statements (trusted test data, written as
/// SQL literals so that each engine converts them to its column types).
fn rows(dialect: Dialect) -> Vec<String> {
    let text = |s: Option<&str>| {
        s.map_or("NULL".to_owned(), |s| {
            format!("'{}'", s.replace('\'', "''"))
        })
    };
    let int = |n: Option<i64>| n.map_or("NULL".to_owned(), |n| n.to_string());
    let postgres = dialect == Dialect::Postgres;
    let mut out = Vec::new();
    for c in CATEGORIES {
        out.push(format!(
            "INSERT INTO categories (id, name, priority) VALUES ({}, {}, {})",
            c.id,
            text(Some(c.name)),
            int(c.priority)
        ));
    }
    for c in COLOURS {
        out.push(format!(
            "INSERT INTO colours (code, label) VALUES ({}, {})",
            text(Some(c.code)),
            text(Some(c.label))
        ));
    }
    for t in THINGS {
        let active = match (t.active, postgres) {
            (None, _) => "NULL",
            (Some(true), true) => "TRUE",
            (Some(false), true) => "FALSE",
            (Some(true), false) => "1",
            (Some(false), false) => "0",
        };
        // MySQL's DATETIME holds UTC without a zone: the instant, written plainly.
        let seen_at_utc = t.seen_at.map(|s| s.trim_end_matches('Z').replace('T', " "));
        let seen_at = match dialect {
            Dialect::Postgres => t.seen_at,
            Dialect::MySql => seen_at_utc.as_deref(),
            Dialect::Sqlite => t.seen_at_stored,
            _ => unreachable!("an engine the suite does not know"),
        };
        out.push(format!(
            "INSERT INTO things (id, name, note, qty, price, ratio, active, born, seen_at, \
             opens, uid, category_id, colour_code) \
             VALUES ({}, {}, {}, {}, {}, {}, {active}, {}, {}, {}, {}, {}, {})",
            t.id,
            text(Some(t.name)),
            text(t.note),
            int(t.qty),
            t.price.map_or("NULL".to_owned(), |p| format!("{p:.2}")),
            t.ratio.map_or("NULL".to_owned(), |r| format!("{r:?}")),
            text(t.born),
            text(seen_at),
            text(t.opens),
            text(t.uid),
            int(t.category_id),
            text(t.colour_code),
        ));
    }
    out
}

/// What a client saw: status, headers and body of one response.
#[derive(Debug)]
pub struct Answer {
    /// The request, for messages.
    pub request: String,
    pub status: Status,
    headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    /// The value of header `name` (case-insensitive), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Panics, showing the answer, unless the status is 200.
    pub fn ok(&self) -> &Self {
        assert_eq!(
            self.status,
            Status::Ok,
            "GET {} answered {}: {}",
            self.request,
            self.status,
            self.body
        );
        self
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| {
            panic!(
                "GET {}: body is not JSON ({e}): {}",
                self.request, self.body
            )
        })
    }

    /// The entities of a 200 collection response.
    pub fn value(&self) -> Vec<Value> {
        self.ok();
        match self.json().get("value") {
            Some(Value::Array(items)) => items.clone(),
            _ => panic!("GET {}: no value array in {}", self.request, self.body),
        }
    }

    /// The `id`s of the entities of a 200 collection response, in order.
    pub fn ids(&self) -> Vec<i64> {
        self.value().iter().map(id_of).collect()
    }

    /// `@odata.nextLink`, if present.
    pub fn next_link(&self) -> Option<String> {
        self.json()
            .get("@odata.nextLink")
            .map(|l| l.as_str().expect("nextLink is a string").to_owned())
    }

    /// Panics unless this is an OData error with `status`, a code, a
    /// message, and `target` (when given) naming the option at fault.
    pub fn assert_error(&self, status: Status, target: Option<&str>) -> &Self {
        assert_eq!(
            self.status, status,
            "GET {} should answer {status}: {}",
            self.request, self.body
        );
        assert_eq!(
            self.header("OData-Version"),
            Some("4.0"),
            "GET {}: errors carry OData-Version too",
            self.request
        );
        let body = self.json();
        let error = body
            .get("error")
            .and_then(Value::as_object)
            .unwrap_or_else(|| panic!("GET {}: not an OData error: {}", self.request, self.body));
        assert_eq!(body.as_object().map(|o| o.len()), Some(1), "{}", self.body);
        for field in ["code", "message"] {
            assert!(
                error
                    .get(field)
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty()),
                "GET {}: error.{field} should be a non-empty string: {}",
                self.request,
                self.body
            );
        }
        if let Some(target) = target {
            assert_eq!(
                error.get("target").and_then(Value::as_str),
                Some(target),
                "GET {}: error target: {}",
                self.request,
                self.body
            );
        }
        self
    }
}

/// The `id` of an entity.
pub fn id_of(entity: &Value) -> i64 {
    entity["id"]
        .as_i64()
        .unwrap_or_else(|| panic!("entity without an integer id: {entity}"))
}

/// The `id`s of a JSON array of entities, in order.
pub fn ids(items: &Value) -> Vec<i64> {
    items
        .as_array()
        .unwrap_or_else(|| panic!("not a collection: {items}"))
        .iter()
        .map(id_of)
        .collect()
}

/// The property names of an entity, sorted.
pub fn keys_of(entity: &Value) -> BTreeSet<String> {
    entity
        .as_object()
        .unwrap_or_else(|| panic!("not an entity: {entity}"))
        .keys()
        .cloned()
        .collect()
}

/// Characters escaped in a query option's name or value: everything but
/// letters, digits and the punctuation OData writes bare.
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'$')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b',')
    .remove(b'/')
    .remove(b':')
    .remove(b'*')
    .remove(b'@')
    .remove(b'!')
    .remove(b';')
    .remove(b'=');

/// Characters escaped in a resource path.
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'?')
    .add(b'<')
    .add(b'>')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'|')
    .add(b'\\')
    .add(b'^');

/// `/odata/<resource>?<options>` with the resource and each option
/// percent-encoded. `target` is written as a person would type it
/// (`Things?$filter=name eq 'fig'&$top=2`); options are split on `&`, so an
/// option value holding `&` needs [`odata_uri`].
pub fn odata_target(target: &str) -> String {
    let (resource, query) = target.split_once('?').unwrap_or((target, ""));
    let options: Vec<(&str, &str)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .collect();
    odata_uri(resource, &options)
}

/// `/odata/<resource>?<name>=<value>&…`, each part percent-encoded.
pub fn odata_uri(resource: &str, options: &[(&str, &str)]) -> String {
    let mut uri = format!("/odata/{}", utf8_percent_encode(resource, PATH));
    for (i, (name, value)) in options.iter().enumerate() {
        uri.push(if i == 0 { '?' } else { '&' });
        uri.push_str(&utf8_percent_encode(name, QUERY_VALUE).to_string());
        uri.push('=');
        uri.push_str(&utf8_percent_encode(value, QUERY_VALUE).to_string());
    }
    uri
}

impl TestApp {
    /// `GET /odata/<target>` (see [`odata_target`]) as the client stands.
    pub async fn odata(&self, target: &str) -> Answer {
        self.get_uri(&odata_target(target), &[]).await
    }

    /// `GET /odata/<target>` with extra request headers.
    pub async fn odata_with(&self, target: &str, headers: &[(&str, &str)]) -> Answer {
        self.get_uri(&odata_target(target), headers).await
    }

    /// `GET` of an absolute link the service wrote, sent verbatim.
    pub async fn follow(&self, link: &str, headers: &[(&str, &str)]) -> Answer {
        let uri = link
            .strip_prefix(BASE_URL)
            .unwrap_or_else(|| panic!("link {link} does not start with base_url {BASE_URL}"));
        self.get_uri(uri, headers).await
    }

    /// `GET <uri>` (already encoded) with extra request headers.
    pub async fn get_uri(&self, uri: &str, headers: &[(&str, &str)]) -> Answer {
        let mut request = self.client.get(uri.to_owned());
        for (name, value) in headers {
            request = request.header(Header::new(name.to_string(), value.to_string()));
        }
        let response = request.dispatch().await;
        let status = response.status();
        let headers = response
            .headers()
            .iter()
            .map(|h| (h.name().to_string(), h.value().to_string()))
            .collect();
        let body = response.into_string().await.unwrap_or_default();
        Answer {
            request: uri.to_owned(),
            status,
            headers,
            body,
        }
    }
}

/// Whether two JSON values are the same number (within rounding).
pub fn same_number(v: &Value, expected: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - expected).abs() < 1e-9)
}

/// Every property of a thing, in declaration order.
pub const THING_PROPERTIES: [&str; 13] = [
    "id",
    "name",
    "note",
    "qty",
    "price",
    "ratio",
    "active",
    "born",
    "seen_at",
    "opens",
    "uid",
    "category_id",
    "colour_code",
];

/// Panics unless every property `entity` carries has the value of `t`,
/// written as OData JSON: numbers (decimals too) as numbers, booleans as
/// booleans, dates `YYYY-MM-DD`, instants RFC 3339 in UTC with `Z`, times
/// `HH:MM:SS`, GUIDs lower-case, nulls as null.
pub fn assert_is_thing(entity: &Value, t: &Thing) {
    let fields = entity
        .as_object()
        .unwrap_or_else(|| panic!("not an entity: {entity}"));
    let text = |s: Option<&str>| s.map_or(Value::Null, Value::from);
    let int = |n: Option<i64>| n.map_or(Value::Null, Value::from);
    for (name, got) in fields {
        if name.contains('@') || name == "category" || name == "colour" {
            continue;
        }
        let expected = match name.as_str() {
            "id" => Value::from(t.id),
            "name" => Value::from(t.name),
            "note" => text(t.note),
            "qty" => int(t.qty),
            "price" | "ratio" => {
                let x = if name == "price" { t.price } else { t.ratio };
                match x {
                    Some(x) => {
                        assert!(
                            same_number(got, x),
                            "thing {}: {name} should be the number {x}, got {got}",
                            t.id
                        );
                        continue;
                    }
                    None => Value::Null,
                }
            }
            "active" => t.active.map_or(Value::Null, Value::from),
            "born" => text(t.born),
            "seen_at" => text(t.seen_at),
            "opens" => text(t.opens),
            "uid" => text(t.uid),
            "category_id" => int(t.category_id),
            "colour_code" => text(t.colour_code),
            other => panic!("thing {}: unexpected property {other}", t.id),
        };
        assert_eq!(got, &expected, "thing {}: property {name}", t.id);
    }
}

/// A value `$orderby` sorts things by.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
pub enum Sortable {
    Bool(bool),
    Number(f64),
    Text(&'static str),
}

/// The value of `property` (a property or `category/<property>` path) of
/// `t`, as `$orderby` compares it; `None` for null.
pub fn sort_value(t: &Thing, property: &str) -> Option<Sortable> {
    use Sortable::*;
    match property {
        "id" => Some(Number(t.id as f64)),
        "qty" => t.qty.map(|q| Number(q as f64)),
        "price" => t.price.map(Number),
        "ratio" => t.ratio.map(Number),
        "active" => t.active.map(Bool),
        "born" => t.born.map(Text),
        // The canonical spellings sort chronologically.
        "seen_at" => t.seen_at.map(Text),
        "opens" => t.opens.map(Text),
        "category_id" => t.category_id.map(|c| Number(c as f64)),
        "category/name" => category_of(t).map(|c| Text(c.name)),
        "category/priority" => category_of(t).and_then(|c| c.priority.map(|p| Number(p as f64))),
        other => panic!("no sort value for {other}"),
    }
}

/// The ids of the things `keep` admits in `$orderby` order: each
/// `(property, descending)` term with nulls first ascending and last
/// descending, then the key in the direction of the last term.
pub fn ordered_ids(keep: impl Fn(&Thing) -> bool, orderby: &[(&str, bool)]) -> Vec<i64> {
    let mut things: Vec<&Thing> = THINGS.iter().filter(|t| keep(t)).collect();
    let key = (
        "id",
        orderby.last().is_some_and(|(_, descending)| *descending),
    );
    things.sort_by(|a, b| {
        orderby
            .iter()
            .chain(std::iter::once(&key))
            .map(|(property, descending)| {
                let order = sort_value(a, property)
                    .partial_cmp(&sort_value(b, property))
                    .expect("comparable values");
                if *descending {
                    order.reverse()
                } else {
                    order
                }
            })
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    things.iter().map(|t| t.id).collect()
}
