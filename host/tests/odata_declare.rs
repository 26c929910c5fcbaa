//! Entity sets declared in configuration (`[odata.sets.<Name>]`): columns and
//! types read from the schema, the exposure rules applied, and every bad
//! declaration refused with the key that holds it.
//!
//! Each test runs on a fresh SQLite file and, when
//! `GATEHOUSE_TEST_DATABASE_URL` names a PostgreSQL or MySQL/MariaDB server,
//! on a fresh schema or database there too. CI runs it with each server.

mod common;

use std::collections::BTreeMap;

use gatehouse::db::{Db, Dialect};
use gatehouse::odata::{declared_sets, EdmType, EntitySet, Navigation, SetConfig};
use gatehouse::ConfigError;
use rocket::figment::providers::{Format, Toml};
use rocket::figment::Figment;
use tempfile::TempDir;

/// A database under test, and what keeps it alive until the test ends.
struct Engine {
    db: Db,
    _sqlite: Option<TempDir>,
    _server: Option<common::TestDb>,
}

/// A fresh SQLite database, and a fresh one on the configured server.
async fn engines() -> Vec<Engine> {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("declare.db").display()
    );
    let sqlite = Db::connect(&url).await.expect("open the SQLite database");
    let mut engines = vec![Engine {
        db: sqlite,
        _sqlite: Some(dir),
        _server: None,
    }];
    if server_configured() {
        let database = common::TestDb::new().await;
        engines.push(Engine {
            db: database.connect().await,
            _sqlite: None,
            _server: Some(database),
        });
    }
    engines
}

/// Whether this run also covers a server. The suite runs once on SQLite and
/// once per server with `GATEHOUSE_TEST_DATABASE_URL` set (CI does each), so
/// without the variable these tests cover SQLite only.
fn server_configured() -> bool {
    if common::server_url().is_some() {
        return true;
    }
    eprintln!("no server covered in this run: GATEHOUSE_TEST_DATABASE_URL is not set");
    false
}

async fn create(db: &Db, statements: &[&str]) {
    for sql in statements {
        db.execute(sqlx::query(&db.dialect().placeholders(sql)))
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// A table of categories and one of items pointing at them; valid on every engine.
const SHOP: &[&str] = &[
    "CREATE TABLE categories (id INTEGER PRIMARY KEY, name VARCHAR(100) NOT NULL)",
    "CREATE TABLE items (id INTEGER PRIMARY KEY, name VARCHAR(100) NOT NULL, \
     secret TEXT, category_id INTEGER REFERENCES categories (id))",
];

/// The `[odata.sets]` table of a configuration written in TOML.
fn sets(toml: &str) -> BTreeMap<String, SetConfig> {
    Figment::from(Toml::string(toml))
        .extract_inner("odata.sets")
        .unwrap_or_else(|e| panic!("configuration does not parse: {e}\n{toml}"))
}

/// Declares the sets of `toml` on a fresh shop on every engine, with what each
/// engine answered.
async fn declare_on_shop(toml: &str) -> Vec<(Dialect, Result<Vec<EntitySet>, ConfigError>)> {
    let mut outcomes = Vec::new();
    for engine in engines().await {
        create(&engine.db, SHOP).await;
        let declared = declared_sets(&engine.db, &sets(toml)).await;
        outcomes.push((engine.db.dialect(), declared));
    }
    outcomes
}

/// Declares `toml` on a fresh shop; the single set it declares, on every engine.
async fn shop_set(toml: &str) -> Vec<(Dialect, EntitySet)> {
    let mut declared = Vec::new();
    for (dialect, outcome) in declare_on_shop(toml).await {
        let mut found = outcome.unwrap_or_else(|e| panic!("{dialect:?}: {e}"));
        assert_eq!(found.len(), 1, "{dialect:?}: one set");
        declared.push((dialect, found.remove(0)));
    }
    declared
}

/// Panics unless declaring `toml` fails on every engine with an error on
/// `key` whose message contains `reason`.
async fn assert_refused(toml: &str, key: &str, reason: &str) {
    for (dialect, outcome) in declare_on_shop(toml).await {
        let error = outcome.expect_err(&format!("{dialect:?}: {toml} should be refused"));
        let message = error.to_string();
        assert_eq!(error.key, key, "{dialect:?}: {message}");
        assert!(
            message.starts_with(&format!("invalid configuration `{key}`: ")),
            "{dialect:?}: {message}"
        );
        assert!(message.contains(reason), "{dialect:?}: {message}");
    }
}

/// `(name, type, nullable)` of every property, in output order.
fn columns(set: &EntitySet) -> Vec<(&str, EdmType, bool)> {
    set.properties
        .iter()
        .map(|p| (p.name.as_str(), p.edm_type, p.nullable))
        .collect()
}

/// A table with a column of every kind the mapping knows on `dialect`, and
/// the properties it must yield.
fn typed_table(dialect: Dialect) -> (&'static str, Vec<(&'static str, EdmType, bool)>) {
    use EdmType::*;
    match dialect {
        Dialect::Sqlite => (
            "CREATE TABLE typed (id INTEGER PRIMARY KEY, small SMALLINT NOT NULL, \
             whole INTEGER, plain INT, quarter INT4, mid MEDIUMINT, big BIGINT, \
             flag BOOLEAN, tiny TINYINT(1), price DECIMAL(10, 2), amount NUMERIC, \
             ratio DOUBLE PRECISION, real_value REAL, float_value FLOAT, born DATE, \
             seen DATETIME, stamped TIMESTAMP, opens TIME, token UUID, code CHAR(36), \
             name VARCHAR(100), notes TEXT, doc CLOB, data BLOB, untyped)",
            vec![
                ("id", Int64, false),
                ("small", Int16, false),
                ("whole", Int64, true),
                ("plain", Int64, true),
                ("quarter", Int32, true),
                ("mid", Int32, true),
                ("big", Int64, true),
                ("flag", Boolean, true),
                ("tiny", Boolean, true),
                ("price", Decimal, true),
                ("amount", Decimal, true),
                ("ratio", Double, true),
                ("real_value", Double, true),
                ("float_value", Double, true),
                ("born", Date, true),
                ("seen", DateTimeOffset, true),
                ("stamped", DateTimeOffset, true),
                ("opens", TimeOfDay, true),
                ("token", String, true),
                ("code", String, true),
                ("name", String, true),
                ("notes", String, true),
                ("doc", String, true),
                ("data", String, true),
                ("untyped", String, true),
            ],
        ),
        Dialect::Postgres => (
            "CREATE TABLE typed (id SERIAL PRIMARY KEY, small SMALLINT NOT NULL, \
             whole INTEGER, quarter INT4, big BIGINT, eight INT8, flag BOOLEAN, \
             price NUMERIC(10, 2), ratio DOUBLE PRECISION, real_value REAL, \
             born DATE, stamped TIMESTAMP, stamped_tz TIMESTAMPTZ, opens TIME, \
             token UUID, code CHAR(36), name VARCHAR(100), notes TEXT, doc JSONB)",
            vec![
                ("id", Int32, false),
                ("small", Int16, false),
                ("whole", Int32, true),
                ("quarter", Int32, true),
                ("big", Int64, true),
                ("eight", Int64, true),
                ("flag", Boolean, true),
                ("price", Decimal, true),
                ("ratio", Double, true),
                ("real_value", Double, true),
                ("born", Date, true),
                ("stamped", DateTimeOffset, true),
                ("stamped_tz", DateTimeOffset, true),
                ("opens", TimeOfDay, true),
                ("token", Guid, true),
                ("code", String, true),
                ("name", String, true),
                ("notes", String, true),
                ("doc", String, true),
            ],
        ),
        Dialect::MySql => (
            "CREATE TABLE typed (id INT AUTO_INCREMENT PRIMARY KEY, small SMALLINT NOT NULL, \
             tiny TINYINT, flag BOOLEAN, mid MEDIUMINT, whole INT, counter INT UNSIGNED, \
             big BIGINT, huge BIGINT UNSIGNED, price DECIMAL(10, 2), ratio DOUBLE, \
             real_value FLOAT, born DATE, seen DATETIME(3), stamped TIMESTAMP NULL, \
             opens TIME, code CHAR(36), name VARCHAR(100), notes TEXT, doc LONGTEXT, \
             data BLOB)",
            vec![
                ("id", Int32, false),
                ("small", Int16, false),
                ("tiny", Int16, true),
                ("flag", Boolean, true),
                ("mid", Int32, true),
                ("whole", Int32, true),
                ("counter", Int64, true),
                ("big", Int64, true),
                ("huge", Int64, true),
                ("price", Decimal, true),
                ("ratio", Double, true),
                ("real_value", Double, true),
                ("born", Date, true),
                ("seen", DateTimeOffset, true),
                ("stamped", DateTimeOffset, true),
                ("opens", TimeOfDay, true),
                ("code", String, true),
                ("name", String, true),
                ("notes", String, true),
                ("doc", String, true),
                ("data", String, true),
            ],
        ),
        _ => unreachable!("an engine the suite does not know"),
    }
}

#[rocket::async_test]
async fn every_column_type_maps_to_its_edm_type() {
    for engine in engines().await {
        let dialect = engine.db.dialect();
        let (ddl, expected) = typed_table(dialect);
        create(&engine.db, &[ddl]).await;
        let declared = declared_sets(&engine.db, &sets("[odata.sets.Typed]\ntable = 'typed'"))
            .await
            .unwrap_or_else(|e| panic!("{dialect:?}: {e}"));
        assert_eq!(columns(&declared[0]), expected, "{dialect:?}");
    }
}

#[rocket::async_test]
async fn set_takes_name_table_key_and_flags_from_configuration() {
    let toml = "[odata.sets.Goods]\ntable = 'items'\npublic = true\nsearchable = ['name']";
    for (dialect, set) in shop_set(toml).await {
        assert_eq!(
            (set.name.as_str(), set.table.as_str(), set.key.as_str()),
            ("Goods", "items", "id"),
            "{dialect:?}"
        );
        assert!(set.public, "{dialect:?}");
        assert_eq!(set.searchable, ["name"], "{dialect:?}");
    }
}

#[rocket::async_test]
async fn nullability_follows_the_schema_and_the_key_is_never_null() {
    for (dialect, set) in shop_set("[odata.sets.Items]\ntable = 'items'").await {
        let nullable: Vec<_> = set
            .properties
            .iter()
            .map(|p| (p.name.as_str(), p.nullable))
            .collect();
        let expected = [
            ("id", false),
            ("name", false),
            ("secret", true),
            ("category_id", true),
        ];
        assert_eq!(nullable, expected, "{dialect:?}");
    }
}

#[rocket::async_test]
async fn excluded_columns_are_not_properties() {
    let toml = "[odata.sets.Items]\ntable = 'items'\nexclude = ['secret']";
    for (dialect, set) in shop_set(toml).await {
        let names: Vec<_> = set.properties.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["id", "name", "category_id"], "{dialect:?}");
    }
}

#[rocket::async_test]
async fn types_override_the_schema() {
    let toml = "[odata.sets.Items]\ntable = 'items'\n\
                types = { secret = 'Edm.Guid', category_id = 'Edm.Decimal', name = 'Edm.String' }";
    for (dialect, set) in shop_set(toml).await {
        let id_type = match dialect {
            Dialect::Sqlite => EdmType::Int64,
            _ => EdmType::Int32,
        };
        let expected = [
            ("id", id_type, false),
            ("name", EdmType::String, false),
            ("secret", EdmType::Guid, true),
            ("category_id", EdmType::Decimal, true),
        ];
        assert_eq!(columns(&set), expected, "{dialect:?}");
    }
}

#[rocket::async_test]
async fn every_edm_type_name_is_accepted_as_override() {
    let names = [
        ("Edm.String", EdmType::String),
        ("Edm.Int16", EdmType::Int16),
        ("Edm.Int32", EdmType::Int32),
        ("Edm.Int64", EdmType::Int64),
        ("Edm.Decimal", EdmType::Decimal),
        ("Edm.Double", EdmType::Double),
        ("Edm.Boolean", EdmType::Boolean),
        ("Edm.Date", EdmType::Date),
        ("Edm.DateTimeOffset", EdmType::DateTimeOffset),
        ("Edm.TimeOfDay", EdmType::TimeOfDay),
        ("Edm.Guid", EdmType::Guid),
    ];
    let toml: String = names
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            format!("[odata.sets.Set{i}]\ntable = 'items'\ntypes = {{ secret = '{name}' }}\n")
        })
        .collect();
    for (dialect, outcome) in declare_on_shop(&toml).await {
        let declared = outcome.unwrap_or_else(|e| panic!("{dialect:?}: {e}"));
        for (i, (name, edm_type)) in names.iter().enumerate() {
            let set = declared.iter().find(|s| s.name == format!("Set{i}"));
            let secret = set.and_then(|s| s.properties.iter().find(|p| p.name == "secret"));
            assert_eq!(
                secret.map(|p| p.edm_type),
                Some(*edm_type),
                "{dialect:?}: {name}"
            );
        }
    }
}

#[rocket::async_test]
async fn navigations_are_built_to_one_and_to_many() {
    let toml = "[odata.sets.Items]\ntable = 'items'\nexclude = ['category_id']\n\
                navigation = { category = { target = 'Categories', column = 'category_id' } }\n\
                [odata.sets.Categories]\ntable = 'categories'\n\
                navigation = { items = { target = 'Items', remote_column = 'category_id' } }";
    for (dialect, outcome) in declare_on_shop(toml).await {
        let declared = outcome.unwrap_or_else(|e| panic!("{dialect:?}: {e}"));
        let navigations: BTreeMap<_, _> = declared
            .iter()
            .map(|s| (s.name.as_str(), s.navigations.clone()))
            .collect();
        let expected = BTreeMap::from([
            (
                "Categories",
                vec![Navigation::to_many("items", "Items", "category_id")],
            ),
            (
                "Items",
                vec![Navigation::to_one("category", "Categories", "category_id")],
            ),
        ]);
        assert_eq!(navigations, expected, "{dialect:?}");
    }
}

#[rocket::async_test]
async fn missing_table_is_refused() {
    let toml = "[odata.sets.Items]\ntable = 'nope'";
    assert_refused(toml, "odata.sets.Items.table", "no table `nope`").await;
}

#[rocket::async_test]
async fn set_name_must_be_an_odata_identifier() {
    let toml = "[odata.sets.'Bad-Name']\ntable = 'items'";
    assert_refused(toml, "odata.sets.Bad-Name", "OData identifier").await;
    let toml = "[odata.sets.9Items]\ntable = 'items'";
    assert_refused(toml, "odata.sets.9Items", "OData identifier").await;
}

#[rocket::async_test]
async fn missing_key_column_is_refused() {
    let toml = "[odata.sets.Items]\ntable = 'items'\nkey = 'uuid'";
    assert_refused(toml, "odata.sets.Items.key", "no column `uuid`").await;
}

#[rocket::async_test]
async fn excluded_key_column_is_refused() {
    let toml = "[odata.sets.Items]\ntable = 'items'\nexclude = ['id']";
    assert_refused(toml, "odata.sets.Items.key", "`id` is excluded").await;
}

#[rocket::async_test]
async fn excluding_an_unknown_column_is_refused() {
    let toml = "[odata.sets.Items]\ntable = 'items'\nexclude = ['nope']";
    assert_refused(toml, "odata.sets.Items.exclude", "no column `nope`").await;
}

#[rocket::async_test]
async fn searching_an_unknown_column_is_refused() {
    let toml = "[odata.sets.Items]\ntable = 'items'\nsearchable = ['nope']";
    assert_refused(toml, "odata.sets.Items.searchable", "no column `nope`").await;
}

#[rocket::async_test]
async fn searching_an_excluded_column_is_refused() {
    let toml = "[odata.sets.Items]\ntable = 'items'\nexclude = ['secret']\nsearchable = ['secret']";
    assert_refused(toml, "odata.sets.Items.searchable", "`secret` is excluded").await;
}

#[rocket::async_test]
async fn searching_a_column_that_is_not_a_string_is_refused() {
    let toml = "[odata.sets.Items]\ntable = 'items'\nsearchable = ['category_id']";
    let reason = "`category_id` is not a string";
    assert_refused(toml, "odata.sets.Items.searchable", reason).await;
    let toml = "[odata.sets.Items]\ntable = 'items'\nsearchable = ['name']\n\
                types = { name = 'Edm.Int32' }";
    assert_refused(
        toml,
        "odata.sets.Items.searchable",
        "`name` is not a string",
    )
    .await;
}

#[rocket::async_test]
async fn typing_an_unknown_column_is_refused() {
    let toml = "[odata.sets.Items]\ntable = 'items'\ntypes = { nope = 'Edm.String' }";
    assert_refused(toml, "odata.sets.Items.types.nope", "no column `nope`").await;
}

#[rocket::async_test]
async fn unknown_edm_type_name_is_refused() {
    let toml = "[odata.sets.Items]\ntable = 'items'\ntypes = { secret = 'Edm.Text' }";
    let reason = "unknown type `Edm.Text` (use Edm.String, Edm.Int16";
    assert_refused(toml, "odata.sets.Items.types.secret", reason).await;
}

#[rocket::async_test]
async fn navigation_needs_exactly_one_of_column_and_remote_column() {
    let key = "odata.sets.Items.navigation.category";
    let neither = "[odata.sets.Items]\ntable = 'items'\n\
                   navigation = { category = { target = 'Categories' } }";
    assert_refused(neither, key, "needs `column` (to-one) or `remote_column`").await;
    let both = "[odata.sets.Items]\ntable = 'items'\nnavigation = { category = { \
                target = 'Categories', column = 'category_id', remote_column = 'id' } }";
    assert_refused(both, key, "has both `column` and `remote_column`").await;
}

#[rocket::async_test]
async fn navigation_through_an_unknown_column_is_refused() {
    let toml = "[odata.sets.Items]\ntable = 'items'\n\
                navigation = { category = { target = 'Categories', column = 'cat' } }";
    let key = "odata.sets.Items.navigation.category";
    assert_refused(toml, key, "table `items` has no column `cat`").await;
}

#[rocket::async_test]
async fn navigation_named_like_an_exposed_column_is_refused() {
    let toml = "[odata.sets.Items]\ntable = 'items'\n\
                navigation = { name = { target = 'Categories', column = 'category_id' } }";
    assert_refused(toml, "odata.sets.Items.navigation.name", "called `name`").await;
}

#[rocket::async_test]
async fn column_that_is_not_an_odata_identifier_must_be_excluded() {
    for engine in engines().await {
        let dialect = engine.db.dialect();
        let ddl = format!(
            "CREATE TABLE odd (id INTEGER PRIMARY KEY, {} DATE)",
            dialect.quote("order date")
        );
        create(&engine.db, &[&ddl]).await;
        let refused = declared_sets(&engine.db, &sets("[odata.sets.Odd]\ntable = 'odd'")).await;
        let error = refused.expect_err(&format!("{dialect:?}: a column called `order date`"));
        assert_eq!(error.key, "odata.sets.Odd.exclude", "{dialect:?}: {error}");
        let toml = "[odata.sets.Odd]\ntable = 'odd'\nexclude = ['order date']";
        let declared = declared_sets(&engine.db, &sets(toml)).await;
        let names: Vec<_> = declared
            .unwrap_or_else(|e| panic!("{dialect:?}: {e}"))
            .iter()
            .flat_map(|s| s.properties.iter().map(|p| p.name.clone()))
            .collect();
        assert_eq!(names, ["id"], "{dialect:?}");
    }
}

#[rocket::async_test]
async fn table_name_is_never_spliced_into_sql() {
    let toml = "[odata.sets.Items]\ntable = \"items') --\"";
    assert_refused(toml, "odata.sets.Items.table", "no table `items') --`").await;
}
