//! `$expand`: to-one and to-many navigations loaded with their entities,
//! nested options (`$filter`, `$orderby`, `$select`, `$top`, `$skip`,
//! `$count`, `$expand`), and the nested next link of a collection cut by the
//! page size, which leads to the navigation route with the nested options.

use rocket::http::Status;
use serde_json::Value;

use crate::helpers::{TestApp, BASE_URL};
use crate::odata_fixture::{
    assert_is_thing, category_of, colour_of, id_of, ids, ids_where, items_of, keys_of, odata_uri,
    ordered_ids, spawn_fixture, spawn_fixture_with, thing, CATEGORIES, COLOURS, THINGS,
};

async fn get(app: &TestApp, resource: &str, options: &[(&str, &str)]) -> Value {
    let answer = app.get_uri(&odata_uri(resource, options), &[]).await;
    answer.ok();
    answer.json()
}

#[rocket::async_test]
async fn to_one_expansion_embeds_the_related_entity_or_null() {
    let app = spawn_fixture().await;
    let body = get(&app, "Things", &[("$expand", "category,colour")]).await;
    let value = body["value"].as_array().unwrap();
    assert_eq!(value.len(), THINGS.len());
    for (entity, t) in value.iter().zip(THINGS) {
        assert_is_thing(entity, t);
        match category_of(t) {
            Some(c) => {
                assert_eq!(entity["category"]["id"], c.id, "thing {}", t.id);
                assert_eq!(entity["category"]["name"], c.name);
                assert_eq!(
                    entity["category"]["priority"],
                    c.priority.map_or(Value::Null, Value::from)
                );
            }
            None => assert_eq!(entity["category"], Value::Null, "thing {}", t.id),
        }
        match colour_of(t) {
            Some(c) => assert_eq!(entity["colour"]["label"], c.label, "thing {}", t.id),
            None => assert_eq!(entity["colour"], Value::Null, "thing {}", t.id),
        }
    }
}

#[rocket::async_test]
async fn to_many_expansion_embeds_each_parents_collection_in_key_order() {
    let app = spawn_fixture().await;
    let body = get(&app, "Categories", &[("$expand", "items")]).await;
    let value = body["value"].as_array().unwrap();
    assert_eq!(value.len(), CATEGORIES.len());
    for (entity, c) in value.iter().zip(CATEGORIES) {
        assert_eq!(entity["id"], c.id);
        assert_eq!(ids(&entity["items"]), items_of(c.id), "category {}", c.id);
        for item in entity["items"].as_array().unwrap() {
            assert_is_thing(item, thing(id_of(item)));
        }
        assert!(entity.get("items@odata.nextLink").is_none());
        assert!(entity.get("items@odata.count").is_none());
    }
}

#[rocket::async_test]
async fn nested_filter_orderby_and_select_shape_each_collection() {
    let app = spawn_fixture().await;
    let body = get(
        &app,
        "Categories",
        &[(
            "$expand",
            "items($filter=qty ne null;$orderby=qty desc;$select=name,qty)",
        )],
    )
    .await;
    for (entity, c) in body["value"].as_array().unwrap().iter().zip(CATEGORIES) {
        let expected = ordered_ids(
            |t| t.category_id == Some(c.id) && t.qty.is_some(),
            &[("qty", true)],
        );
        assert_eq!(ids(&entity["items"]), expected, "category {}", c.id);
        for item in entity["items"].as_array().unwrap() {
            assert_eq!(
                keys_of(item),
                ["id", "name", "qty"].map(String::from).into()
            );
        }
    }
}

#[rocket::async_test]
async fn nested_top_skip_and_count_apply_per_parent() {
    let app = spawn_fixture().await;
    let body = get(
        &app,
        "Categories",
        &[(
            "$expand",
            "items($top=2;$skip=1;$count=true;$orderby=id desc)",
        )],
    )
    .await;
    for (entity, c) in body["value"].as_array().unwrap().iter().zip(CATEGORIES) {
        let all: Vec<i64> = items_of(c.id).into_iter().rev().collect();
        let expected: Vec<i64> = all.iter().copied().skip(1).take(2).collect();
        assert_eq!(ids(&entity["items"]), expected, "category {}", c.id);
        assert_eq!(entity["items@odata.count"], all.len(), "category {}", c.id);
        assert!(
            entity.get("items@odata.nextLink").is_none(),
            "a collection cut by the client's own $top has no next link: {entity}"
        );
    }
}

#[rocket::async_test]
async fn nested_count_honours_the_nested_filter() {
    let app = spawn_fixture().await;
    let body = get(
        &app,
        "Categories",
        &[("$expand", "items($filter=active eq true;$count=true)")],
    )
    .await;
    for (entity, c) in body["value"].as_array().unwrap().iter().zip(CATEGORIES) {
        let expected = ids_where(|t| t.category_id == Some(c.id) && t.active == Some(true));
        assert_eq!(ids(&entity["items"]), expected);
        assert_eq!(
            entity["items@odata.count"],
            expected.len(),
            "category {}",
            c.id
        );
    }
}

#[rocket::async_test]
async fn a_nested_collection_cut_by_the_page_size_links_to_its_navigation_route() {
    let app = spawn_fixture_with(|f| f.merge(("odata.pagination.default", 2))).await;
    let nested = "items($filter=qty ne 0;$orderby=qty;$select=name,qty;$count=true)";
    let body = get(&app, "Categories", &[("$expand", nested), ("$top", "2")]).await;
    let value = body["value"].as_array().unwrap();
    assert_eq!(value.len(), 2);
    for entity in value {
        let c = entity["id"].as_i64().unwrap();
        let expected = ordered_ids(
            |t| t.category_id == Some(c) && t.qty != Some(0),
            &[("qty", false)],
        );
        assert_eq!(entity["items@odata.count"], expected.len());
        let mut seen = ids(&entity["items"]);
        assert_eq!(seen, expected[..expected.len().min(2)], "category {c}");
        let mut link = entity
            .get("items@odata.nextLink")
            .and_then(Value::as_str)
            .map(str::to_owned);
        assert_eq!(link.is_some(), expected.len() > 2, "category {c}: {entity}");
        if let Some(l) = &link {
            let route = format!("{BASE_URL}/odata/Categories({c})/items?");
            assert!(l.starts_with(&route), "{l} should start with {route}");
        }
        while let Some(l) = link {
            let page = app.follow(&l, &[]).await;
            seen.extend(page.ids());
            for item in page.value() {
                assert_eq!(
                    keys_of(&item),
                    ["id", "name", "qty"].map(String::from).into()
                );
            }
            link = page.next_link();
        }
        assert_eq!(
            seen, expected,
            "category {c}: the nested link leads to the rest"
        );
    }
}

#[rocket::async_test]
async fn a_nested_link_from_a_string_key_is_followable() {
    let app = spawn_fixture_with(|f| f.merge(("odata.pagination.default", 1))).await;
    let answer = app
        .get_uri(
            &odata_uri(
                "Colours",
                &[("$expand", "things($select=name)"), ("$top", "4")],
            ),
            &[],
        )
        .await;
    answer.ok();
    // One colour per page: walk the colours and follow each nested link.
    let mut page = answer;
    let mut colours = 0;
    loop {
        let body = page.json();
        for colour in body["value"].as_array().unwrap() {
            colours += 1;
            let code = colour["code"].as_str().unwrap().to_owned();
            let expected = ids_where(|t| t.colour_code == Some(code.as_str()));
            let mut seen = ids(&colour["things"]);
            let mut link = colour
                .get("things@odata.nextLink")
                .and_then(Value::as_str)
                .map(str::to_owned);
            while let Some(l) = link {
                let next = app.follow(&l, &[]).await;
                assert_eq!(next.status, Status::Ok, "{l}: {}", next.body);
                seen.extend(next.ids());
                link = next.next_link();
            }
            assert_eq!(seen, expected, "colour {code}");
        }
        match page.next_link() {
            Some(l) => page = app.follow(&l, &[]).await,
            None => break,
        }
    }
    assert_eq!(colours, COLOURS.len());
}

#[rocket::async_test]
async fn expansions_nest_two_levels() {
    let app = spawn_fixture().await;
    let body = get(
        &app,
        "Categories",
        &[(
            "$expand",
            "items($expand=colour($select=label);$select=name)",
        )],
    )
    .await;
    for (entity, c) in body["value"].as_array().unwrap().iter().zip(CATEGORIES) {
        assert_eq!(ids(&entity["items"]), items_of(c.id));
        for item in entity["items"].as_array().unwrap() {
            let t = thing(id_of(item));
            assert_eq!(
                keys_of(item),
                ["colour", "id", "name"].map(String::from).into()
            );
            match colour_of(t) {
                Some(k) => {
                    assert_eq!(item["colour"]["label"], k.label);
                    assert_eq!(item["colour"]["code"], k.code, "the key is always there");
                }
                None => assert_eq!(item["colour"], Value::Null),
            }
        }
    }
    let body = get(
        &app,
        "Things",
        &[(
            "$expand",
            "category($expand=items($select=id;$orderby=id desc))",
        )],
    )
    .await;
    for (entity, t) in body["value"].as_array().unwrap().iter().zip(THINGS) {
        match t.category_id {
            Some(c) => {
                let siblings: Vec<i64> = items_of(c).into_iter().rev().collect();
                assert_eq!(
                    ids(&entity["category"]["items"]),
                    siblings,
                    "thing {}",
                    t.id
                );
            }
            None => assert_eq!(entity["category"], Value::Null),
        }
    }
}

#[rocket::async_test]
async fn expansion_on_an_entity_a_navigation_and_with_select() {
    let app = spawn_fixture().await;
    let body = get(
        &app,
        "Things(1)",
        &[("$expand", "category"), ("$select", "name")],
    )
    .await;
    assert_eq!(
        keys_of(&body),
        ["@odata.context", "category", "id", "name"]
            .map(String::from)
            .into()
    );
    assert_eq!(
        body["category"]["name"],
        category_of(thing(1)).unwrap().name
    );
    let body = get(&app, "Categories(3)/items", &[("$expand", "colour")]).await;
    for item in body["value"].as_array().unwrap() {
        let t = thing(id_of(item));
        assert_eq!(
            item["colour"]["code"],
            colour_of(t).map_or(Value::Null, |c| Value::from(c.code))
        );
    }
    let body = get(
        &app,
        "Colours('navy blue')",
        &[("$expand", "things($select=name)")],
    )
    .await;
    assert_eq!(
        ids(&body["things"]),
        ids_where(|t| t.colour_code == Some("navy blue"))
    );
}

#[rocket::async_test]
async fn expanding_what_is_not_a_navigation_is_400_on_expand() {
    let app = spawn_fixture().await;
    for expand in [
        "nothing",
        "name",
        "category/items",
        "items",
        "category($filter=nope eq 1)",
        "category($top=x)",
        "category($orderby=items)",
        "category($select=nope)",
        "category($unknown=1)",
        "category(",
        "category($expand=nothing)",
    ] {
        app.get_uri(&odata_uri("Things", &[("$expand", expand)]), &[])
            .await
            .assert_error(Status::BadRequest, Some("$expand"));
    }
    // Categories cannot be searched, wherever they are reached.
    app.get_uri(
        &odata_uri("Things", &[("$expand", "category($search=x)")]),
        &[],
    )
    .await
    .assert_error(Status::BadRequest, Some("$expand"));
}

#[rocket::async_test]
async fn a_nested_top_larger_than_the_page_is_cut_and_lowered_in_the_link() {
    let app = spawn_fixture_with(|f| f.merge(("odata.pagination.default", 2))).await;
    let body = get(
        &app,
        "Categories(1)",
        &[("$expand", "items($top=5;$select=name)")],
    )
    .await;
    let all = items_of(1);
    assert_eq!(all.len(), 3);
    assert_eq!(ids(&body["items"]), all[..2]);
    let link = body["items@odata.nextLink"]
        .as_str()
        .unwrap_or_else(|| panic!("a nested next link: {body}"));
    assert!(
        link.starts_with(&format!("{BASE_URL}/odata/Categories(1)/items?")),
        "{link}"
    );
    let options: Vec<(String, String)> = url::Url::parse(link)
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let get_option = |name: &str| {
        options
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(get_option("$top"), Some("3"), "{link}");
    assert_eq!(get_option("$skip"), Some("2"), "{link}");
    assert_eq!(get_option("$select"), Some("name"), "{link}");
    let rest = app.follow(link, &[]).await;
    assert_eq!(rest.ids(), all[2..]);
    assert!(rest.next_link().is_none());
}
