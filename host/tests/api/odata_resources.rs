//! `/odata` resources over the typed fixture: the service document and
//! `$metadata`, collections, entities by key, `/$count`, navigation routes,
//! `$select` and `@odata.context`, and how each type is written.

use rocket::http::Status;
use serde_json::{json, Value};

use crate::helpers::BASE_URL;
use crate::odata_fixture::{
    all_ids, assert_is_thing, category_of, colour_of, id_of, ids_where, items_of, keys_of,
    spawn_fixture, spawn_fixture_with, thing, THINGS, THING_PROPERTIES,
};

fn context(fragment: &str) -> Value {
    Value::from(format!("{BASE_URL}/odata/$metadata#{fragment}"))
}

#[rocket::async_test]
async fn service_document_lists_the_sets_a_guest_may_read() {
    let app = spawn_fixture().await;
    let answer = app.odata("").await;
    answer.ok();
    assert_eq!(answer.header("OData-Version"), Some("4.0"));
    let doc = answer.json();
    assert_eq!(doc["@odata.context"], format!("{BASE_URL}/odata/$metadata"));
    let mut names: Vec<&str> = doc["value"]
        .as_array()
        .expect("value")
        .iter()
        .map(|s| s["name"].as_str().expect("name"))
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["Categories", "Colours", "Things"]);
    for set in doc["value"].as_array().unwrap() {
        assert_eq!(set["kind"], "EntitySet");
        assert_eq!(set["url"], set["name"]);
    }
}

#[rocket::async_test]
async fn metadata_types_every_column_from_the_schema() {
    let app = spawn_fixture().await;
    let answer = app.odata("$metadata").await;
    answer.ok();
    assert_eq!(answer.header("OData-Version"), Some("4.0"));
    assert!(
        answer
            .header("Content-Type")
            .is_some_and(|t| t.contains("xml")),
        "{:?}",
        answer.header("Content-Type")
    );
    let xml = &answer.body;
    let integer = |name: &str| {
        xml.contains(&format!(r#"<Property Name="{name}" Type="Edm.Int64""#))
            || xml.contains(&format!(r#"<Property Name="{name}" Type="Edm.Int32""#))
    };
    assert!(integer("qty"), "{xml}");
    for (name, ty) in [
        ("note", "Edm.String"),
        ("price", "Edm.Decimal"),
        ("ratio", "Edm.Double"),
        ("active", "Edm.Boolean"),
        ("born", "Edm.Date"),
        ("seen_at", "Edm.DateTimeOffset"),
        ("opens", "Edm.TimeOfDay"),
        ("uid", "Edm.Guid"),
    ] {
        assert!(
            xml.contains(&format!(r#"<Property Name="{name}" Type="{ty}"/>"#)),
            "{name} should be a nullable {ty}: {xml}"
        );
    }
    assert!(
        xml.contains(r#"<Property Name="name" Type="Edm.String" Nullable="false"/>"#),
        "NOT NULL columns are not nullable: {xml}"
    );
    assert!(xml.contains(r#"<EntitySet Name="Things" EntityType="Gatehouse.Things">"#));
    assert!(xml.contains(r#"<NavigationProperty Name="category" Type="Gatehouse.Categories"/>"#));
    assert!(
        xml.contains(r#"<NavigationProperty Name="items" Type="Collection(Gatehouse.Things)"/>"#)
    );
    assert!(xml.contains(r#"<Key><PropertyRef Name="code"/></Key>"#));
}

#[rocket::async_test]
async fn collection_writes_every_type_as_odata_json() {
    let app = spawn_fixture().await;
    let answer = app.odata("Things").await;
    assert_eq!(answer.header("OData-Version"), Some("4.0"));
    assert!(answer
        .header("Content-Type")
        .is_some_and(|t| t.starts_with("application/json")));
    let body = answer.json();
    assert_eq!(body["@odata.context"], context("Things"));
    assert!(body.get("@odata.count").is_none());
    assert!(body.get("@odata.nextLink").is_none());
    let value = answer.value();
    assert_eq!(value.iter().map(id_of).collect::<Vec<_>>(), all_ids());
    for (entity, t) in value.iter().zip(THINGS) {
        let expected: Vec<String> = THING_PROPERTIES.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            keys_of(entity),
            expected.into_iter().collect(),
            "every column is a property"
        );
        assert_is_thing(entity, t);
    }
}

#[rocket::async_test]
async fn dates_and_times_exposed_as_strings_are_written_as_their_text() {
    let app = spawn_fixture_with(|f| {
        ["born", "opens", "seen_at"]
            .into_iter()
            .fold(f, |f, column| {
                f.merge((format!("odata.sets.Things.types.{column}"), "Edm.String"))
            })
    })
    .await;
    let value = app
        .odata("Things?$select=born,opens,seen_at")
        .await
        .ok()
        .value();
    assert_eq!(value.len(), THINGS.len());
    for (entity, t) in value.iter().zip(THINGS) {
        assert_eq!(entity["born"], t.born.map_or(Value::Null, Value::from));
        assert_eq!(entity["opens"], t.opens.map_or(Value::Null, Value::from));
        // Each engine spells a stored instant its own way; the day shows.
        match t.seen_at {
            Some(instant) => {
                let text = entity["seen_at"].as_str().unwrap_or_default();
                let day = instant.get(..10).unwrap_or_default();
                assert!(
                    text.contains(day) || t.seen_at_stored.is_some_and(|s| s == text),
                    "{text}"
                );
            }
            None => assert_eq!(entity["seen_at"], Value::Null),
        }
    }
}

#[rocket::async_test]
async fn instants_stored_in_any_spelling_are_written_in_utc_with_z() {
    let app = spawn_fixture().await;
    let value = app.odata("Things?$select=seen_at").await.value();
    for (entity, t) in value.iter().zip(THINGS) {
        assert_eq!(
            entity["seen_at"],
            t.seen_at.map_or(Value::Null, Value::from),
            "thing {} was stored as {:?}",
            t.id,
            t.seen_at_stored
        );
    }
}

#[rocket::async_test]
async fn entity_by_key_is_the_row_with_an_entity_context() {
    let app = spawn_fixture().await;
    for target in ["Things(3)", "Things(id=3)"] {
        let answer = app.odata(target).await;
        answer.ok();
        assert_eq!(answer.header("OData-Version"), Some("4.0"));
        let body = answer.json();
        assert_eq!(
            body["@odata.context"],
            context("Things/$entity"),
            "{target}"
        );
        assert_eq!(body["id"], 3, "{target}");
        assert!(body.get("value").is_none(), "{target}");
        assert_is_thing(&body, thing(3));
    }
}

#[rocket::async_test]
async fn entity_with_select_carries_the_list_in_its_context() {
    let app = spawn_fixture().await;
    let body = app.odata("Things(5)?$select=name,price").await.json();
    assert_eq!(
        body["@odata.context"],
        context("Things(name,price)/$entity")
    );
    assert_eq!(
        keys_of(&body),
        ["@odata.context", "id", "name", "price"]
            .map(String::from)
            .into()
    );
    assert_is_thing(&body, thing(5));
}

#[rocket::async_test]
async fn unknown_key_is_404_in_the_odata_shape() {
    let app = spawn_fixture().await;
    app.odata("Things(999)")
        .await
        .assert_error(Status::NotFound, None);
    app.odata("Colours('purple')")
        .await
        .assert_error(Status::NotFound, None);
}

#[rocket::async_test]
async fn unknown_set_is_404_in_the_odata_shape() {
    let app = spawn_fixture().await;
    app.odata("Nothing")
        .await
        .assert_error(Status::NotFound, None);
    app.odata("things")
        .await
        .assert_error(Status::NotFound, None);
}

#[rocket::async_test]
async fn string_keys_are_found_bare_named_with_spaces_and_quotes() {
    let app = spawn_fixture().await;
    for (target, code, label) in [
        ("Colours('red')", "red", "Red"),
        ("Colours(code='red')", "red", "Red"),
        ("Colours('navy blue')", "navy blue", "Navy"),
        ("Colours('it''s')", "it's", "Quote"),
    ] {
        let body = app.odata(target).await.json();
        assert_eq!(body["code"], code, "{target}: {body}");
        assert_eq!(body["label"], label, "{target}");
        assert_eq!(body["@odata.context"], context("Colours/$entity"));
    }
}

#[rocket::async_test]
async fn select_returns_the_listed_properties_and_the_key() {
    let app = spawn_fixture().await;
    let answer = app.odata("Things?$select=price,name").await;
    let body = answer.json();
    assert_eq!(body["@odata.context"], context("Things(price,name)"));
    for (entity, t) in answer.value().iter().zip(THINGS) {
        assert_eq!(
            keys_of(entity),
            ["id", "name", "price"].map(String::from).into()
        );
        assert_is_thing(entity, t);
    }
}

#[rocket::async_test]
async fn select_star_returns_every_property() {
    let app = spawn_fixture().await;
    let value = app.odata("Things?$select=*").await.value();
    assert_eq!(value.len(), THINGS.len());
    let expected = THING_PROPERTIES.map(String::from).into();
    assert_eq!(keys_of(&value[0]), expected);
}

#[rocket::async_test]
async fn count_segment_is_plain_text_and_honours_filter_and_search() {
    let app = spawn_fixture().await;
    let answer = app.odata("Things/$count").await;
    answer.ok();
    assert_eq!(answer.header("OData-Version"), Some("4.0"));
    assert!(
        answer
            .header("Content-Type")
            .is_some_and(|t| t.starts_with("text/plain")),
        "{:?}",
        answer.header("Content-Type")
    );
    assert_eq!(answer.body, THINGS.len().to_string());
    let filtered = app.odata("Things/$count?$filter=qty gt 4").await;
    let expected = ids_where(|t| t.qty.is_some_and(|q| q > 4)).len();
    assert_eq!(filtered.body, expected.to_string());
    let searched = app.odata("Things/$count?$search=red").await;
    assert_eq!(searched.body, "2", "'red fruit' and 'Red or green'");
    let ignored = app.odata("Things/$count?$top=1&$skip=2").await;
    assert_eq!(ignored.body, THINGS.len().to_string());
}

#[rocket::async_test]
async fn count_option_counts_the_filtered_rows_whatever_top_and_skip() {
    let app = spawn_fixture().await;
    let answer = app
        .odata("Things?$filter=active eq true&$count=true&$top=2&$skip=1")
        .await;
    let expected = ids_where(|t| t.active == Some(true));
    let body = answer.json();
    assert_eq!(body["@odata.count"], expected.len());
    assert_eq!(answer.ids(), expected[1..3]);
    let off = app.odata("Things?$count=false").await.json();
    assert!(off.get("@odata.count").is_none());
}

#[rocket::async_test]
async fn format_json_is_accepted() {
    let app = spawn_fixture().await;
    let answer = app.odata("Things?$format=json&$top=1").await;
    assert_eq!(answer.ids(), [1]);
    let answer = app.odata("Things?$format=application/json&$top=1").await;
    assert_eq!(answer.ids(), [1]);
}

#[rocket::async_test]
async fn to_one_navigation_route_answers_the_related_entity() {
    let app = spawn_fixture().await;
    let answer = app.odata("Things(1)/category").await;
    let body = answer.json();
    let c = category_of(thing(1)).unwrap();
    assert_eq!(body["id"], c.id);
    assert_eq!(body["name"], c.name);
    assert!(body["@odata.context"]
        .as_str()
        .is_some_and(|s| s.starts_with(&format!("{BASE_URL}/odata/$metadata#"))));
    let colour = app.odata("Things(5)/colour").await.json();
    assert_eq!(colour["code"], colour_of(thing(5)).unwrap().code);
}

#[rocket::async_test]
async fn to_one_navigation_to_nothing_is_204() {
    let app = spawn_fixture().await;
    let answer = app.odata("Things(6)/category").await;
    assert_eq!(answer.status, Status::NoContent, "{}", answer.body);
    assert_eq!(answer.header("OData-Version"), Some("4.0"));
    assert!(answer.body.is_empty());
}

#[rocket::async_test]
async fn a_navigation_checks_its_options_before_looking_for_the_parent() {
    let app = spawn_fixture().await;
    // Thing 6 has no category: before any statement, the unknown property
    // in `$select` is 400, not the 204 of a navigation to nothing.
    app.odata("Things(6)/category?$select=nosuch")
        .await
        .assert_error(Status::BadRequest, Some("$select"));
    app.odata("Things(99)/category?$select=nosuch")
        .await
        .assert_error(Status::BadRequest, Some("$select"));
    app.odata("Things(6)/category/$count")
        .await
        .assert_error(Status::NotFound, None);
    let fine = app.odata("Things(6)/category?$select=name").await;
    assert_eq!(fine.status, Status::NoContent, "{}", fine.body);
}

#[rocket::async_test]
async fn to_many_navigation_route_answers_the_related_collection() {
    let app = spawn_fixture().await;
    for c in 1..=4 {
        let answer = app.odata(&format!("Categories({c})/items")).await;
        assert_eq!(answer.ids(), items_of(c), "category {c}");
        let count = app.odata(&format!("Categories({c})/items/$count")).await;
        assert_eq!(count.body, items_of(c).len().to_string(), "category {c}");
    }
}

#[rocket::async_test]
async fn navigation_route_takes_every_query_option() {
    let app = spawn_fixture().await;
    let answer = app
        .odata("Categories(id=2)/items?$filter=qty ge 0&$orderby=qty desc&$select=name,qty&$count=true")
        .await;
    let mut expected: Vec<_> = items_of(2)
        .into_iter()
        .map(thing)
        .filter(|t| t.qty.is_some_and(|q| q >= 0))
        .collect();
    expected.sort_by_key(|t| std::cmp::Reverse(t.qty));
    let body = answer.json();
    assert_eq!(body["@odata.count"], expected.len());
    let value = answer.value();
    assert_eq!(
        value.iter().map(id_of).collect::<Vec<_>>(),
        expected.iter().map(|t| t.id).collect::<Vec<_>>()
    );
    for entity in &value {
        assert_eq!(
            keys_of(entity),
            ["id", "name", "qty"].map(String::from).into()
        );
    }
    let count = app
        .odata("Categories(2)/items/$count?$filter=qty ge 0")
        .await;
    assert_eq!(count.body, expected.len().to_string());
}

#[rocket::async_test]
async fn navigation_from_a_string_key_follows_the_key() {
    let app = spawn_fixture().await;
    let answer = app.odata("Colours('navy blue')/things").await;
    assert_eq!(
        answer.ids(),
        ids_where(|t| t.colour_code == Some("navy blue"))
    );
    let answer = app.odata("Colours('it''s')/things/$count").await;
    assert_eq!(answer.body, "1");
}

#[rocket::async_test]
async fn navigation_of_a_missing_entity_or_unknown_navigation_is_404() {
    let app = spawn_fixture().await;
    for target in [
        "Categories(99)/items",
        "Categories(99)/items/$count",
        "Things(99)/category",
        "Things(1)/nothing",
        "Things(1)/name",
        // A single entity has no count.
        "Things(1)/category/$count",
    ] {
        app.odata(target).await.assert_error(Status::NotFound, None);
    }
}

#[rocket::async_test]
async fn json_numbers_booleans_and_nulls_are_json_types() {
    let app = spawn_fixture().await;
    let body = app.odata("Things(3)").await.json();
    assert!(
        body["price"].is_number(),
        "decimal as a JSON number: {body}"
    );
    assert_eq!(body["active"], json!(true));
    assert_eq!(body["qty"], Value::Null);
    let body = app.odata("Things(2)").await.json();
    assert_eq!(body["active"], json!(false));
    assert!(body["ratio"].is_number());
}

#[rocket::async_test]
async fn every_response_carries_odata_version() {
    let app = spawn_fixture().await;
    for (target, status) in [
        ("", Status::Ok),
        ("$metadata", Status::Ok),
        ("Things", Status::Ok),
        ("Things(1)", Status::Ok),
        ("Things/$count", Status::Ok),
        ("Categories(1)/items/$count", Status::Ok),
        ("Things(6)/category", Status::NoContent),
        ("Things?$top=x", Status::BadRequest),
        ("Things('x')", Status::BadRequest),
        ("Things(99)", Status::NotFound),
        ("Nothing", Status::NotFound),
        ("Users", Status::Unauthorized),
    ] {
        let answer = app.odata(target).await;
        assert_eq!(answer.status, status, "{target}: {}", answer.body);
        assert_eq!(answer.header("OData-Version"), Some("4.0"), "{target}");
    }
}

#[rocket::async_test]
async fn contexts_and_next_links_use_the_configured_base_url() {
    let base = "https://api.example.test/";
    let app = crate::odata_fixture::spawn_fixture_with(|f| {
        f.merge(("base_url", base))
            .merge(("odata.pagination.default", 4))
    })
    .await;
    let answer = app.odata("Things?$select=name").await;
    let body = answer.json();
    assert_eq!(
        body["@odata.context"],
        "https://api.example.test/odata/$metadata#Things(name)"
    );
    let link = answer.next_link().expect("a next link");
    let seek = "https://api.example.test/odata/Things?$select=name&$skip=4&$skiptoken=";
    assert!(link.starts_with(seek), "{link}");
    let next = app
        .get_uri(link.strip_prefix("https://api.example.test").unwrap(), &[])
        .await;
    assert_eq!(next.ids(), all_ids()[4..8]);
    let entity = app.odata("Categories(1)").await.json();
    assert_eq!(
        entity["@odata.context"],
        "https://api.example.test/odata/$metadata#Categories/$entity"
    );
}
