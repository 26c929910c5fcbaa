//! Sets keyed by uuids, related by a uuid foreign key: the keys and foreign
//! keys come back as the text every engine writes for a uuid (PostgreSQL's
//! `uuid` columns are read in binary), so that entities, expansions both
//! ways, navigations and the next links of a paged collection all find
//! their rows.

use gatehouse::db::{Db, Dialect};
use rocket::figment::providers::{Format, Toml};
use serde_json::Value;
use sqlx::Row;

use crate::helpers::{spawn_host_at, TestApp, TestDb};
use crate::odata_fixture::odata_uri;

/// Owners: `(id, name)`.
const OWNERS: [(&str, &str); 3] = [
    ("0f6e1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a01", "Ada"),
    ("7d00ffee-0000-4000-a000-00000000beef", "Brook"),
    ("c3a1b2c3-d4e5-46f7-8899-aabbccddeeff", "Cyd"),
];

/// Pets: `(id, name, owner)`, in key order.
const PETS: [(&str, &str, Option<&str>); 5] = [
    (
        "01234567-89ab-4cde-8f01-23456789abcd",
        "Rex",
        Some(OWNERS[1].0),
    ),
    (
        "1a1a1a1a-2b2b-4c3c-9d4d-5e5e5e5e5e5e",
        "Tom",
        Some(OWNERS[0].0),
    ),
    ("80000000-0000-4000-8000-000000000000", "Kit", None),
    (
        "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee",
        "Bo",
        Some(OWNERS[1].0),
    ),
    (
        "ffffffff-ffff-4fff-bfff-ffffffffffff",
        "Zed",
        Some(OWNERS[2].0),
    ),
];

const SETS: &str = r#"
[odata.sets.Owners]
table = "owners"
public = true
types = { id = "Edm.Guid" }
navigation = { pets = { target = "Pets", remote_column = "owner_id" } }

[odata.sets.Pets]
table = "pets"
public = true
types = { id = "Edm.Guid", owner_id = "Edm.Guid" }
navigation = { owner = { target = "Owners", column = "owner_id" } }
"#;

/// The reference host over `owners` and `pets`, with uuid columns where
/// the engine has them (PostgreSQL) and their text elsewhere.
async fn spawn_pets() -> TestApp {
    let database = TestDb::new().await;
    let db = Db::connect(&database.url).await.expect("test database");
    let uuid = match db.dialect() {
        Dialect::Postgres => "UUID",
        Dialect::MySql if has_uuid_type(&db).await => "UUID",
        Dialect::MySql => "CHAR(36)",
        Dialect::Sqlite => "TEXT",
        _ => unreachable!("an engine the suite does not know"),
    };
    let mut statements = vec![
        format!("CREATE TABLE owners (id {uuid} PRIMARY KEY, name VARCHAR(32) NOT NULL)"),
        format!(
            "CREATE TABLE pets (id {uuid} PRIMARY KEY, name VARCHAR(32) NOT NULL, \
             owner_id {uuid} REFERENCES owners (id))"
        ),
    ];
    for (id, name) in OWNERS {
        statements.push(format!(
            "INSERT INTO owners (id, name) VALUES ('{id}', '{name}')"
        ));
    }
    for (id, name, owner) in PETS {
        let owner = owner.map_or("NULL".to_owned(), |o| format!("'{o}'"));
        statements.push(format!(
            "INSERT INTO pets (id, name, owner_id) VALUES ('{id}', '{name}', {owner})"
        ));
    }
    for sql in &statements {
        db.execute(sqlx::query(&db.dialect().placeholders(sql)))
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    db.close().await;
    spawn_host_at(database, |figment| {
        gatehouse_host::rocket(figment.merge(Toml::string(SETS)))
    })
    .await
}

/// Whether the MySQL-family server is a MariaDB with a `UUID` type (10.7 and
/// later); MySQL has none.
async fn has_uuid_type(db: &Db) -> bool {
    let row = db
        .fetch_optional(sqlx::query("SELECT VERSION()"))
        .await
        .expect("the server's version")
        .expect("a row");
    let version: String = row.try_get(0).expect("a version");
    let number = |part: Option<&str>| part.and_then(|p| p.parse::<u32>().ok()).unwrap_or(0);
    let mut parts = version.split(['.', '-']);
    let (major, minor) = (number(parts.next()), number(parts.next()));
    version.contains("MariaDB") && (major, minor) >= (10, 7)
}

async fn get(app: &TestApp, resource: &str, options: &[(&str, &str)]) -> Value {
    let answer = app.get_uri(&odata_uri(resource, options), &[]).await;
    answer.ok();
    answer.json()
}

fn owner_name(id: &str) -> &'static str {
    OWNERS.iter().find(|(o, _)| *o == id).expect("an owner").1
}

#[rocket::async_test]
async fn uuid_keys_and_foreign_keys_read_as_their_text() {
    let app = spawn_pets().await;
    let body = get(&app, "Pets", &[("$expand", "owner")]).await;
    let pets = body["value"].as_array().expect("a collection");
    assert_eq!(pets.len(), PETS.len(), "{body}");
    for pet in pets {
        let (id, name, owner) = PETS
            .into_iter()
            .find(|(id, _, _)| pet["id"] == *id)
            .unwrap_or_else(|| panic!("no pet {}: {body}", pet["id"]));
        assert_eq!(pet["name"], name, "{id}");
        assert_eq!(pet["owner_id"], owner.map_or(Value::Null, Value::from));
        match owner {
            Some(o) => {
                assert_eq!(pet["owner"]["id"], o, "{pet}");
                assert_eq!(pet["owner"]["name"], owner_name(o));
            }
            None => assert_eq!(pet["owner"], Value::Null, "{pet}"),
        }
    }
}

#[rocket::async_test]
async fn a_to_many_expansion_over_a_uuid_foreign_key_finds_each_owners_pets() {
    let app = spawn_pets().await;
    let body = get(&app, "Owners", &[("$expand", "pets($orderby=name)")]).await;
    let owners = body["value"].as_array().expect("a collection");
    assert_eq!(owners.len(), OWNERS.len(), "{body}");
    for owner in owners {
        let id = owner["id"].as_str().expect("an id");
        let mut expected: Vec<&str> = PETS
            .iter()
            .filter(|(_, _, o)| *o == Some(id))
            .map(|(_, name, _)| *name)
            .collect();
        expected.sort();
        let got: Vec<&str> = owner["pets"]
            .as_array()
            .expect("pets")
            .iter()
            .map(|p| p["name"].as_str().expect("a name"))
            .collect();
        assert_eq!(got, expected, "owner {id}: {body}");
    }
}

#[rocket::async_test]
async fn an_entity_and_its_navigation_are_addressed_by_uuid() {
    let app = spawn_pets().await;
    let (id, name, owner) = PETS[3];
    let pet = get(&app, &format!("Pets({id})"), &[]).await;
    assert_eq!(pet["id"], id);
    assert_eq!(pet["name"], name);
    let owner = owner.expect("Bo has an owner");
    let found = get(&app, &format!("Pets({id})/owner"), &[]).await;
    assert_eq!(found["id"], owner);
    assert_eq!(found["name"], owner_name(owner));
    let pets = get(
        &app,
        &format!("Owners({owner})/pets"),
        &[("$orderby", "name")],
    )
    .await;
    let names: Vec<&str> = pets["value"]
        .as_array()
        .expect("a collection")
        .iter()
        .map(|p| p["name"].as_str().expect("a name"))
        .collect();
    assert_eq!(names, ["Bo", "Rex"]);
}

#[rocket::async_test]
async fn next_links_page_through_uuid_keys_in_the_engines_key_order() {
    let app = spawn_pets().await;
    let prefer = [("Prefer", "odata.maxpagesize=2")];
    let mut answer = app.get_uri(&odata_uri("Pets", &[]), &prefer).await;
    let mut ids = Vec::new();
    let mut pages = 0;
    loop {
        answer.ok();
        pages += 1;
        let body = answer.json();
        for pet in body["value"].as_array().expect("a collection") {
            ids.push(pet["id"].as_str().expect("an id").to_owned());
        }
        match answer.next_link() {
            Some(link) => answer = app.follow(&link, &prefer).await,
            None => break,
        }
        assert!(pages < 10, "next links never end: {ids:?}");
    }
    // The key order is the engine's order of its uuids (MariaDB's `UUID`
    // type orders them by their last groups first): one unpaged read.
    let whole = get(&app, "Pets", &[]).await;
    let unpaged: Vec<&str> = whole["value"]
        .as_array()
        .expect("a collection")
        .iter()
        .map(|p| p["id"].as_str().expect("an id"))
        .collect();
    assert_eq!(ids, unpaged);
    assert_eq!(pages, 3);
    let mut sorted = ids.clone();
    sorted.sort();
    let mut expected: Vec<&str> = PETS.iter().map(|(id, _, _)| *id).collect();
    expected.sort();
    assert_eq!(sorted, expected);
}
