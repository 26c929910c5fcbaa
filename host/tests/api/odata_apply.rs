//! `$apply` over the fixture: groups, sums, counts, averages and extremes
//! compared with values computed here from the seeded rows, then `$filter`,
//! `$orderby`, `$top`, `$count` and paging over the aggregated rows, the
//! caller's scope before grouping, and refusals naming `$apply`.

use std::collections::BTreeMap;

use rocket::http::Status;
use serde_json::Value;

use crate::odata_fixture::{spawn_fixture, Thing, CATEGORIES, THINGS};

/// The groups of `THINGS` by `key`, in key order (None first).
fn groups<K: Ord + Clone>(key: impl Fn(&Thing) -> K) -> BTreeMap<K, Vec<&'static Thing>> {
    let mut out: BTreeMap<K, Vec<&Thing>> = BTreeMap::new();
    for t in THINGS {
        out.entry(key(t)).or_default().push(t);
    }
    out
}

fn number(v: &Value) -> Option<f64> {
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

#[rocket::async_test]
async fn groups_with_sums_counts_and_extremes_match_the_rows() {
    let app = spawn_fixture().await;
    let answer = app
        .odata(
            "Things?$apply=groupby((colour_code),aggregate(qty with sum as Total,$count as N,\
             price with max as Top,qty with countdistinct as Kinds))",
        )
        .await;
    answer.ok();
    let rows = answer.value();
    let expected = groups(|t| t.colour_code);
    assert_eq!(rows.len(), expected.len(), "{}", answer.body);
    for (row, (code, things)) in rows.iter().zip(&expected) {
        assert_eq!(row["colour_code"].as_str(), *code, "{row}");
        assert_eq!(row["N"].as_i64(), Some(things.len() as i64), "{row}");
        let qty: Vec<i64> = things.iter().filter_map(|t| t.qty).collect();
        match qty.is_empty() {
            true => assert!(row["Total"].is_null(), "{row}"),
            false => assert_eq!(
                number(&row["Total"]),
                Some(qty.iter().sum::<i64>() as f64),
                "{row}"
            ),
        }
        let mut kinds = qty.clone();
        kinds.sort();
        kinds.dedup();
        assert_eq!(row["Kinds"].as_i64(), Some(kinds.len() as i64), "{row}");
        let top = things
            .iter()
            .filter_map(|t| t.price)
            .fold(None, |m: Option<f64>, p| Some(m.map_or(p, |m| m.max(p))));
        match top {
            None => assert!(row["Top"].is_null(), "{row}"),
            Some(top) => assert!(
                number(&row["Top"]).is_some_and(|v| (v - top).abs() < 1e-9),
                "{row}"
            ),
        }
        assert_eq!(
            row.as_object().map(|o| o.len()),
            Some(5),
            "only the group and the aliases: {row}"
        );
    }
}

#[rocket::async_test]
async fn a_grand_total_and_an_average_over_filtered_rows() {
    let app = spawn_fixture().await;
    let answer = app
        .odata("Things?$apply=filter(qty gt 1)/aggregate(qty with sum as Total,qty with average as Mean,$count as N)")
        .await;
    answer.ok();
    let rows = answer.value();
    assert_eq!(rows.len(), 1, "{}", answer.body);
    let qty: Vec<i64> = THINGS
        .iter()
        .filter_map(|t| t.qty)
        .filter(|q| *q > 1)
        .collect();
    let row = &rows[0];
    assert_eq!(row["N"].as_i64(), Some(qty.len() as i64), "{row}");
    assert_eq!(
        number(&row["Total"]),
        Some(qty.iter().sum::<i64>() as f64),
        "{row}"
    );
    let mean = qty.iter().sum::<i64>() as f64 / qty.len() as f64;
    assert!(
        number(&row["Mean"]).is_some_and(|m| (m - mean).abs() < 1e-9),
        "{row}"
    );
}

#[rocket::async_test]
async fn options_and_paging_apply_to_the_aggregated_rows() {
    let app = spawn_fixture().await;
    let expected: Vec<(Option<i64>, usize)> = groups(|t| t.category_id)
        .into_iter()
        .map(|(k, v)| (k, v.len()))
        .collect();
    let mut by_count = expected.clone();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let answer = app
        .odata_with(
            "Things?$apply=groupby((category_id),aggregate($count as N))&$orderby=N desc,category_id&$count=true",
            &[("Prefer", "odata.maxpagesize=2")],
        )
        .await;
    answer.ok();
    assert_eq!(
        answer.json()["@odata.count"].as_i64(),
        Some(expected.len() as i64)
    );
    let mut seen: Vec<(Option<i64>, usize)> = Vec::new();
    let mut page = answer;
    loop {
        for row in page.value() {
            seen.push((
                row["category_id"].as_i64(),
                row["N"].as_i64().unwrap() as usize,
            ));
        }
        let Some(next) = page.next_link() else { break };
        assert!(next.contains("$apply="), "{next}");
        page = app
            .follow(&next, &[("Prefer", "odata.maxpagesize=2")])
            .await;
        page.ok();
    }
    assert_eq!(seen, by_count);
    // $filter over the aliases.
    let answer = app
        .odata("Things?$apply=groupby((category_id),aggregate($count as N))&$filter=N gt 1")
        .await;
    answer.ok();
    let many: Vec<Option<i64>> = expected
        .iter()
        .filter(|(_, n)| *n > 1)
        .map(|(k, _)| *k)
        .collect();
    let got: Vec<Option<i64>> = answer
        .value()
        .iter()
        .map(|r| r["category_id"].as_i64())
        .collect();
    assert_eq!(got, many);
    // $apply's own orderby and top.
    let answer = app
        .odata("Things?$apply=groupby((category_id),aggregate($count as N))/orderby(N desc,category_id)/top(1)")
        .await;
    answer.ok();
    let rows = answer.value();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["category_id"].as_i64(), by_count[0].0);
    // A filter over the aggregated rows, as UI5 sends it, then its slice.
    let answer = app
        .odata("Things?$apply=groupby((category_id),aggregate($count as N))/filter(N gt 1)/orderby(N desc)/skip(1)/top(1)")
        .await;
    answer.ok();
    let mut many_desc: Vec<(Option<i64>, usize)> =
        by_count.iter().filter(|(_, n)| *n > 1).cloned().collect();
    many_desc.truncate(2);
    let got: Vec<Option<i64>> = answer
        .value()
        .iter()
        .map(|r| r["category_id"].as_i64())
        .collect();
    assert_eq!(
        got,
        many_desc
            .iter()
            .skip(1)
            .map(|(k, _)| *k)
            .collect::<Vec<_>>(),
        "{}",
        answer.body
    );
    let answer = app
        .odata("Things?$apply=identity/groupby((category_id),aggregate($count as N))/identity&$count=true")
        .await;
    answer.ok();
    assert_eq!(
        answer.json()["@odata.count"].as_i64(),
        Some(expected.len() as i64)
    );
    // The count of the aggregated rows.
    let count = app
        .odata("Things/$count?$apply=groupby((category_id))")
        .await;
    count.ok();
    assert_eq!(count.body.trim(), expected.len().to_string());
}

#[rocket::async_test]
async fn concat_answers_ui5s_leaves_grand_total_count_and_groups_in_turn() {
    let app = spawn_fixture().await;
    // What UI5's first request for a table with a group level, a grand
    // total and $count sends.
    let apply = "concat(groupby((category_id,name))/aggregate($count as UI5__leaves),\
                 aggregate(qty with sum as Total),\
                 groupby((category_id),aggregate(qty with sum as Total))\
                 /concat(aggregate($count as UI5__count),top(2)))";
    let answer = app
        .odata(&format!("Things?$apply={apply}&IEEE754Compatible=true"))
        .await;
    answer.ok();
    let rows = answer.value();
    let groups = groups(|t| t.category_id);
    let leaves = {
        let mut pairs: Vec<(Option<i64>, &str)> =
            THINGS.iter().map(|t| (t.category_id, t.name)).collect();
        pairs.sort();
        pairs.dedup();
        pairs.len()
    };
    let sum = |things: &[&Thing]| -> Option<i64> {
        let qty: Vec<i64> = things.iter().filter_map(|t| t.qty).collect();
        (!qty.is_empty()).then(|| qty.iter().sum())
    };
    assert_eq!(rows.len(), 5, "{}", answer.body);
    // Each row carries only its branch's properties.
    let keys = |row: &Value| -> Vec<String> {
        let mut keys: Vec<String> = row.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    assert_eq!(keys(&rows[0]), ["UI5__leaves"], "{}", answer.body);
    assert_eq!(number(&rows[0]["UI5__leaves"]), Some(leaves as f64));
    assert_eq!(keys(&rows[1]), ["Total"], "{}", answer.body);
    let all: Vec<&Thing> = THINGS.iter().collect();
    assert_eq!(number(&rows[1]["Total"]), sum(&all).map(|n| n as f64));
    assert_eq!(keys(&rows[2]), ["UI5__count"], "{}", answer.body);
    assert_eq!(number(&rows[2]["UI5__count"]), Some(groups.len() as f64));
    for (row, (category, things)) in rows[3..].iter().zip(&groups) {
        assert_eq!(keys(row), ["Total", "category_id"], "{row}");
        assert_eq!(row["category_id"].as_i64(), *category, "{row}");
        assert_eq!(
            number(&row["Total"]),
            sum(things).map(|n| n as f64),
            "{row}"
        );
    }
    // The next level, as UI5 asks for one group's rows.
    let answer = app
        .odata("Things?$apply=filter(category_id eq 1)/groupby((name),aggregate(qty with sum as Total))&$count=true&$skip=0&$top=100")
        .await;
    answer.ok();
    let mut names: Vec<&str> = THINGS
        .iter()
        .filter(|t| t.category_id == Some(1))
        .map(|t| t.name)
        .collect();
    names.sort();
    names.dedup();
    let rows = answer.value();
    let got: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(got, names, "{}", answer.body);
    assert_eq!(
        answer.json()["@odata.count"].as_i64(),
        Some(names.len() as i64)
    );
    // Paged by the server, the branches keep their order.
    let answer = app
        .odata_with(
            &format!("Things?$apply={apply}"),
            &[("Prefer", "odata.maxpagesize=2")],
        )
        .await;
    answer.ok();
    let next = answer.next_link().expect("a next link");
    let second = app
        .follow(&next, &[("Prefer", "odata.maxpagesize=2")])
        .await;
    second.ok();
    assert_eq!(keys(&second.value()[0]), ["UI5__count"], "{}", second.body);
}

#[rocket::async_test]
async fn groups_across_a_navigation_are_nested_objects() {
    let app = spawn_fixture().await;
    let answer = app
        .odata("Things?$apply=groupby((category/name),aggregate($count as N))")
        .await;
    answer.ok();
    let mut expected: BTreeMap<Option<&str>, i64> = BTreeMap::new();
    for t in THINGS {
        let name = CATEGORIES
            .iter()
            .find(|c| Some(c.id) == t.category_id)
            .map(|c| c.name);
        *expected.entry(name).or_default() += 1;
    }
    let rows = answer.value();
    let got: Vec<(Option<&str>, i64)> = rows
        .iter()
        .map(|r| (r["category"]["name"].as_str(), r["N"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        got,
        expected.into_iter().collect::<Vec<_>>(),
        "{}",
        answer.body
    );
    // Ordered and filtered by the path over the aggregated rows.
    let answer = app
        .odata("Things?$apply=groupby((category/name,category_id))&$orderby=category/name desc&$filter=category/name ne null")
        .await;
    answer.ok();
    let rows = answer.value();
    let mut names: Vec<&str> = CATEGORIES
        .iter()
        .filter(|c| THINGS.iter().any(|t| t.category_id == Some(c.id)))
        .map(|c| c.name)
        .collect();
    names.sort();
    names.reverse();
    let got: Vec<&str> = rows
        .iter()
        .map(|r| r["category"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(got, names, "{}", answer.body);
    for row in rows {
        let id = row["category_id"].as_i64();
        let name = CATEGORIES.iter().find(|c| Some(c.id) == id).map(|c| c.name);
        assert_eq!(row["category"]["name"].as_str(), name, "{row}");
    }
}

#[rocket::async_test]
async fn what_cannot_be_aggregated_is_400_naming_apply() {
    let app = spawn_fixture().await;
    for apply in [
        "groupby((nope))",
        "aggregate(name with sum as S)",
        "aggregate(note with average as A)",
        "groupby((name),aggregate(qty with sum as name))",
        "pivot(x)",
        "filter(qty eq 'x')/aggregate($count as N)",
        "groupby((name))/orderby(nope)",
        "groupby((name),aggregate($count as N))/filter(qty gt 1)",
        "groupby((items/name))",
        "groupby((name,name))",
        "groupby((category/nope))",
        "concat(aggregate($count as N),aggregate(name with max as N))",
        "concat(aggregate($count as N),top(1))",
        "concat(aggregate($count as N),groupby((name)))/top(1)",
        "groupby((name),filter(qty gt 1))",
    ] {
        app.odata(&format!("Things?$apply={apply}"))
            .await
            .assert_error(Status::BadRequest, Some("$apply"));
    }
    app.odata("Things(1)?$apply=aggregate($count as N)")
        .await
        .assert_error(Status::BadRequest, Some("$apply"));
    // Each unsupported transformation or grouping is named in the answer.
    for (apply, named) in [
        (
            "groupby((rollup(name,qty)),aggregate($count as N))",
            "rollup",
        ),
        ("pivot(x)", "pivot"),
        ("compute(qty mul 2 as Q)", "compute"),
    ] {
        let answer = app.odata(&format!("Things?$apply={apply}")).await;
        answer.assert_error(Status::BadRequest, Some("$apply"));
        let message = answer.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains(named), "{apply}: {message}");
    }
}
