//! UI5's tree tables: a set's recursive hierarchy read through `$apply`'s
//! hierarchy functions as OpenUI5 writes them, with every answer computed
//! here from the seeded org chart: the top levels in preorder with their
//! drill states, distances, descendant counts and ranks; nodes expanded and
//! collapsed by `ExpandLevels`; a node's children; siblings in another
//! order; a filtered tree with its ancestors; `$count`, `$top`/`$skip`,
//! server paging and `$select`; a cycle in the data, never followed; and
//! the refusals, naming what was wrong.

use rocket::figment::providers::{Format, Toml};
use serde_json::Value;

use crate::database::TestDb;
use crate::helpers::{spawn_host_at, TestApp};
use gatehouse::db::{Db, Dialect};

/// One row of `staff`.
struct Member {
    id: i64,
    name: &'static str,
    manager: Option<i64>,
}

const fn m(id: i64, name: &'static str, manager: Option<i64>) -> Member {
    Member { id, name, manager }
}

/// Two trees, and three rows on cycles (20 and 21 manage each other, 22
/// manages itself), which no root reaches.
const STAFF: &[Member] = &[
    m(1, "Ada", None),
    m(2, "Bob", None),
    m(3, "Cy", Some(1)),
    m(4, "Di", Some(1)),
    m(5, "Ed", Some(1)),
    m(6, "Flo", Some(3)),
    m(7, "Gus", Some(3)),
    m(8, "Hal", Some(7)),
    m(9, "Ivy", Some(2)),
    m(20, "Loop", Some(21)),
    m(21, "Pool", Some(20)),
    m(22, "Self", Some(22)),
];

const SETS: &str = r#"
[odata.sets.Staff]
table = "staff"
public = true
searchable = ["name"]
navigation = { manager = { target = "Staff", column = "manager_id" } }
hierarchy = { qualifier = "OrgChart", parent = "manager" }
"#;

const TOP: &str = "com.sap.vocabularies.Hierarchy.v1.TopLevels";

async fn spawn_tree() -> TestApp {
    spawn_tree_of(STAFF, SETS).await
}

/// The set `Staff` declared by `sets` over the rows `members`.
async fn spawn_tree_of(members: &[Member], sets: &'static str) -> TestApp {
    let database = TestDb::new().await;
    let db = Db::connect(&database.url).await.expect("tree database");
    let create = match db.dialect() {
        Dialect::MySql => "CREATE TABLE staff (id BIGINT PRIMARY KEY, name VARCHAR(40) NOT NULL, manager_id BIGINT)",
        _ => "CREATE TABLE staff (id BIGINT PRIMARY KEY, name TEXT NOT NULL, manager_id BIGINT)",
    };
    db.execute(db.query(create)).await.expect("create staff");
    for member in members {
        let insert = db
            .query("INSERT INTO staff (id, name, manager_id) VALUES ($1, $2, $3)")
            .bind(member.id)
            .bind(member.name.to_owned())
            .bind(member.manager);
        db.execute(insert).await.expect("insert a member");
    }
    db.close().await;
    spawn_host_at(database, |figment| {
        gatehouse_host::rocket(figment.merge(Toml::string(sets)))
    })
    .await
}

/// `TopLevels` over `Staff` with `rest` (`,Levels=2`, …).
fn top_levels(rest: &str) -> String {
    format!(
        "{TOP}(HierarchyNodes=$root/Staff,HierarchyQualifier='OrgChart',NodeProperty='id'{rest})"
    )
}

/// `ExpandLevels` as pairs: a node, and the levels shown below it (None:
/// all).
type Expanded = Vec<(i64, Option<i64>)>;

/// One row as the answer should show it.
#[derive(Debug, PartialEq)]
struct Shown {
    id: i64,
    depth: i64,
    drill: &'static str,
    below: i64,
}

/// The children of `id`, in sibling order (by key, or by name descending).
fn children(id: i64, by_name_desc: bool) -> Vec<&'static Member> {
    let mut found: Vec<&Member> = STAFF
        .iter()
        .filter(|s| s.manager == Some(id) && s.id != id)
        .collect();
    if by_name_desc {
        found.sort_by(|a, b| b.name.cmp(a.name));
    }
    found
}

/// The rows `TopLevels` with `levels` (None: all) and `expand` (node,
/// levels; None: all) shows, in preorder.
fn expected(levels: Option<i64>, expand: &[(i64, Option<i64>)], by_name_desc: bool) -> Vec<Shown> {
    fn visit(
        id: i64,
        depth: i64,
        open: i64,
        expand: &[(i64, Option<i64>)],
        by_name_desc: bool,
        out: &mut Vec<Shown>,
    ) {
        let open = match expand.iter().find(|(node, _)| *node == id) {
            Some((_, levels)) => levels.unwrap_or(i64::MAX),
            None => open,
        };
        let kids = children(id, by_name_desc);
        let drill = match (kids.is_empty(), open > 0) {
            (true, _) => "leaf",
            (false, true) => "expanded",
            (false, false) => "collapsed",
        };
        let at = out.len();
        out.push(Shown {
            id,
            depth,
            drill,
            below: 0,
        });
        if open > 0 {
            for kid in kids {
                visit(kid.id, depth + 1, open - 1, expand, by_name_desc, out);
            }
        }
        out[at].below = (out.len() - at - 1) as i64;
    }
    let mut roots: Vec<&Member> = STAFF.iter().filter(|s| s.manager.is_none()).collect();
    if by_name_desc {
        roots.sort_by(|a, b| b.name.cmp(a.name));
    }
    let mut out = Vec::new();
    for root in roots {
        visit(
            root.id,
            0,
            levels.map_or(i64::MAX, |l| l - 1),
            expand,
            by_name_desc,
            &mut out,
        );
    }
    out
}

/// The rows of an answer as [`Shown`], checking `LimitedRank` counts up
/// from `first`.
fn shown(rows: &[Value], first: i64) -> Vec<Shown> {
    rows.iter()
        .enumerate()
        .map(|(i, row)| {
            assert_eq!(row["LimitedRank"].as_i64(), Some(first + i as i64), "{row}");
            Shown {
                id: row["id"].as_i64().expect("id"),
                depth: row["DistanceFromRoot"].as_i64().expect("DistanceFromRoot"),
                drill: match row["DrillState"].as_str() {
                    Some("leaf") => "leaf",
                    Some("expanded") => "expanded",
                    Some("collapsed") => "collapsed",
                    other => panic!("DrillState {other:?}"),
                },
                below: row["LimitedDescendantCount"]
                    .as_i64()
                    .expect("LimitedDescendantCount"),
            }
        })
        .collect()
}

#[rocket::async_test]
async fn metadata_names_the_hierarchy_and_its_computed_properties() {
    let app = spawn_tree().await;
    let answer = app.get_uri("/odata/$metadata", &[]).await;
    answer.ok();
    for needle in [
        r#"<Annotation Term="Aggregation.RecursiveHierarchy" Qualifier="OrgChart"><Record><PropertyValue Property="NodeProperty" PropertyPath="id"/><PropertyValue Property="ParentNavigationProperty" NavigationPropertyPath="manager"/>"#,
        r#"<Annotation Term="Hierarchy.RecursiveHierarchy" Qualifier="OrgChart">"#,
        r#"<PropertyValue Property="DrillState" Path="DrillState"/>"#,
        r#"<Property Name="LimitedRank" Type="Edm.Int64"><Annotation Term="Core.Computed" Bool="true"/></Property>"#,
    ] {
        assert!(answer.body.contains(needle), "{needle}\n{}", answer.body);
    }
}

#[rocket::async_test]
async fn top_levels_come_in_preorder_with_their_drill_states_and_counts() {
    let app = spawn_tree().await;
    let cases = [
        (Some(1), ",Levels=1"),
        (Some(2), ",Levels=2"),
        (Some(3), ",Levels=3"),
        (Some(4), ",Levels=4"),
        (Some(5), ",Levels=5"),
        (None, ""),
    ];
    for (levels, rest) in cases {
        let apply = top_levels(rest);
        let answer = app
            .odata(&format!("Staff?$apply={apply}&$count=true"))
            .await;
        answer.ok();
        let rows = answer.value();
        let want = expected(levels, &[], false);
        assert_eq!(shown(&rows, 0), want, "Levels {levels:?}: {}", answer.body);
        assert_eq!(
            answer.json()["@odata.count"].as_i64(),
            Some(want.len() as i64)
        );
        for row in &rows {
            let member = STAFF
                .iter()
                .find(|s| Some(s.id) == row["id"].as_i64())
                .expect("a member");
            assert_eq!(row["name"], member.name);
        }
    }
    // Every level: the rows on cycles are never reached.
    let answer = app.odata(&format!("Staff?$apply={}", top_levels(""))).await;
    let ids: Vec<i64> = answer
        .value()
        .iter()
        .filter_map(|r| r["id"].as_i64())
        .collect();
    assert!(!ids.iter().any(|id| *id >= 20), "{ids:?}");
}

#[rocket::async_test]
async fn expand_levels_expand_and_collapse_nodes_as_ui5_asks() {
    let app = spawn_tree().await;
    let cases: [(i64, &str, Expanded); 5] = [
        (2, r#"[{"NodeID":"3","Levels":1}]"#, vec![(3, Some(1))]),
        (2, r#"[{"NodeID":"1","Levels":0}]"#, vec![(1, Some(0))]),
        (
            2,
            r#"[{"NodeID":3,"Levels":null},{"NodeID":"2","Levels":0}]"#,
            vec![(3, None), (2, Some(0))],
        ),
        // The first level alone, with a node collapsed as UI5 sends it
        // after a collapse, and with one expanded below it.
        (1, r#"[{"NodeID":"1","Levels":0}]"#, vec![(1, Some(0))]),
        (1, r#"[{"NodeID":"1","Levels":1}]"#, vec![(1, Some(1))]),
    ];
    for (levels, json, expand) in cases {
        let apply = top_levels(&format!(",Levels={levels},ExpandLevels={json}"));
        let answer = app.odata(&format!("Staff?$apply={apply}")).await;
        answer.ok();
        assert_eq!(
            shown(&answer.value(), 0),
            expected(Some(levels), &expand, false),
            "Levels={levels} {json}: {}",
            answer.body
        );
    }
}

#[rocket::async_test]
async fn a_nodes_children_come_with_their_drill_states_in_the_order_asked() {
    let app = spawn_tree().await;
    let answer = app
        .odata("Staff?$apply=descendants($root/Staff,OrgChart,id,filter(id eq 3),1)&$count=true")
        .await;
    answer.ok();
    let rows = answer.value();
    let ids: Vec<i64> = rows.iter().filter_map(|r| r["id"].as_i64()).collect();
    assert_eq!(ids, vec![6, 7]);
    assert_eq!(rows[0]["DrillState"], "leaf");
    assert_eq!(rows[1]["DrillState"], "collapsed", "Gus manages Hal");
    assert_eq!(rows[0]["DistanceFromRoot"].as_i64(), Some(2));
    assert_eq!(answer.json()["@odata.count"].as_i64(), Some(2));

    let answer = app
        .odata("Staff?$apply=descendants($root/Staff,OrgChart,id,filter(id eq 1),1)/orderby(name desc)")
        .await;
    let ids: Vec<i64> = answer
        .value()
        .iter()
        .filter_map(|r| r["id"].as_i64())
        .collect();
    assert_eq!(ids, vec![5, 4, 3]);

    // A node on a cycle has no children to show: it is in no tree.
    let answer = app
        .odata("Staff?$apply=descendants($root/Staff,OrgChart,id,filter(id eq 20),1)")
        .await;
    answer.ok();
    assert!(answer.value().is_empty(), "{}", answer.body);

    for levels in [2, 3, 5] {
        let apply = format!(
            "orderby(name desc)/{}",
            top_levels(&format!(",Levels={levels}"))
        );
        let answer = app.odata(&format!("Staff?$apply={apply}")).await;
        answer.ok();
        assert_eq!(
            shown(&answer.value(), 0),
            expected(Some(levels), &[], true),
            "Levels={levels}"
        );
    }

    // More than one level below a node: each with its descendants shown,
    // as the same nodes are on a first page showing one level more.
    for distance in [2, 3] {
        let answer = app
            .odata(&format!(
                "Staff?$apply=descendants($root/Staff,OrgChart,id,filter(id eq 1),{distance})&$count=true"
            ))
            .await;
        answer.ok();
        let want: Vec<Shown> = expected(Some(distance + 1), &[], false)
            .into_iter()
            .skip_while(|row| row.id != 1)
            .skip(1)
            .take_while(|row| row.depth > 0)
            .collect();
        assert_eq!(
            shown(&answer.value(), 0),
            want,
            "distance {distance}: {}",
            answer.body
        );
        assert_eq!(
            answer.json()["@odata.count"].as_i64(),
            Some(want.len() as i64)
        );
    }
}

#[rocket::async_test]
async fn a_filtered_tree_keeps_the_matches_and_their_ancestors() {
    let app = spawn_tree().await;
    let apply = format!(
        "ancestors($root/Staff,OrgChart,id,filter(name eq 'Hal' or name eq 'Di'),keep start)/{}",
        top_levels("")
    );
    let answer = app.odata(&format!("Staff?$apply={apply}")).await;
    answer.ok();
    let rows = answer.value();
    let got: Vec<(i64, bool, i64)> = rows
        .iter()
        .map(|r| {
            (
                r["id"].as_i64().expect("id"),
                r["Matched"].as_bool().expect("Matched"),
                r["MatchedDescendantCount"]
                    .as_i64()
                    .expect("MatchedDescendantCount"),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (1, false, 2),
            (3, false, 1),
            (7, false, 1),
            (8, true, 0),
            (4, true, 0)
        ]
    );
    assert_eq!(rows[0]["DrillState"], "expanded");
    assert_eq!(rows[3]["DrillState"], "leaf");

    // A node of the filtered tree expanded, as UI5 asks for it: its
    // children on the way to a match only.
    let apply = "ancestors($root/Staff,OrgChart,id,filter(name eq 'Hal'),keep start)/\
                 descendants($root/Staff,OrgChart,id,filter(id eq 1),1)";
    let answer = app
        .odata(&format!("Staff?$apply={apply}&$count=true"))
        .await;
    answer.ok();
    let children: Vec<(i64, String)> = answer
        .value()
        .iter()
        .map(|r| (r["id"].as_i64().expect("id"), r["DrillState"].to_string()))
        .collect();
    assert_eq!(
        children,
        vec![(3, "\"collapsed\"".to_owned())],
        "{}",
        answer.body
    );

    // Searched, as UI5 writes it.
    let apply = format!(
        "ancestors($root/Staff,OrgChart,id,search(Ivy),keep start)/{}",
        top_levels(",Levels=1")
    );
    let answer = app.odata(&format!("Staff?$apply={apply}")).await;
    answer.ok();
    let rows = answer.value();
    assert_eq!(rows.len(), 1, "{}", answer.body);
    assert_eq!(
        (rows[0]["id"].as_i64(), rows[0]["DrillState"].as_str()),
        (Some(2), Some("collapsed"))
    );
}

#[rocket::async_test]
async fn the_tree_pages_counts_and_selects_like_any_rows() {
    let app = spawn_tree().await;
    let apply = top_levels("");
    let want = expected(None, &[], false);
    let answer = app
        .odata(&format!("Staff?$apply={apply}&$count=true&$skip=2&$top=3"))
        .await;
    answer.ok();
    assert_eq!(
        answer.json()["@odata.count"].as_i64(),
        Some(want.len() as i64)
    );
    assert_eq!(shown(&answer.value(), 2), want[2..5]);

    // Server paging: each page one statement, the next link carrying on.
    let prefer = [("Prefer", "odata.maxpagesize=4")];
    let mut answer = app
        .odata_with(
            &format!("Staff?$apply={apply}&$select=id,LimitedRank"),
            &prefer,
        )
        .await;
    let mut ids = Vec::new();
    let mut pages = 0;
    loop {
        for row in answer.value() {
            let fields = row
                .as_object()
                .map(|o| o.keys().filter(|k| !k.starts_with('@')).count());
            assert_eq!(fields, Some(2), "only what $select names: {row}");
            ids.push(row["id"].as_i64().expect("id"));
        }
        pages += 1;
        let Some(link) = answer.next_link() else {
            break;
        };
        answer = app.follow(&link, &prefer).await;
    }
    assert_eq!(pages, 3);
    assert_eq!(ids, want.iter().map(|s| s.id).collect::<Vec<_>>());
}

#[rocket::async_test]
async fn a_wrong_hierarchy_or_parameter_is_refused_naming_it() {
    let app = spawn_tree().await;
    let cases = [
        (
            format!("{TOP}(HierarchyNodes=$root/Staff,HierarchyQualifier='Other',NodeProperty='id')"),
            "the hierarchy of Staff is $root/Staff,OrgChart,id",
        ),
        (
            format!("{TOP}(HierarchyNodes=$root/Staff,HierarchyQualifier='OrgChart',NodeProperty='id',Depth=3)"),
            "the TopLevels parameter Depth is not supported",
        ),
        (
            format!("{}/top(2)", top_levels("")),
            "top is not supported",
        ),
        (
            "descendants($root/Staff,OrgChart,id,filter(id eq 1),keep start)".to_owned(),
            "descendants with keep start is not supported",
        ),
    ];
    for (apply, message) in cases {
        let answer = app.odata(&format!("Staff?$apply={apply}")).await;
        assert_eq!(answer.status.code, 400, "{apply}: {}", answer.body);
        let said = answer.json()["error"]["message"].to_string();
        assert!(said.contains(message), "{apply}: {said}");
    }
}

/// Adds employee `id` of `org`, managed by `manager`.
async fn employee(app: &TestApp, id: i64, org: i64, manager: Option<i64>, name: &str) {
    let insert = app
        .db
        .query(
            "INSERT INTO employees (id, organisation_id, manager_id, name, title) \
             VALUES ($1, $2, $3, $4, 'Engineer')",
        )
        .bind(id)
        .bind(org)
        .bind(manager)
        .bind(name.to_owned());
    app.execute(insert).await;
}

/// The rows of `apply` over `set` as (id, drill state, distance,
/// descendants shown), and `@odata.count`.
async fn tree_rows(
    app: &TestApp,
    set: &str,
    apply: &str,
) -> (Vec<(i64, String, i64, i64)>, Option<i64>) {
    let answer = app
        .odata(&format!("{set}?$apply={apply}&$count=true"))
        .await;
    answer.ok();
    let rows = answer
        .value()
        .iter()
        .map(|r| {
            (
                r["id"].as_i64().expect("id"),
                r["DrillState"].as_str().unwrap_or_default().to_owned(),
                r["DistanceFromRoot"].as_i64().expect("distance"),
                r["LimitedDescendantCount"].as_i64().expect("count"),
            )
        })
        .collect();
    (rows, answer.json()["@odata.count"].as_i64())
}

/// The rows of `apply` over `Employees` (see [`tree_rows`]).
async fn chart(app: &TestApp, apply: &str) -> (Vec<(i64, String, i64, i64)>, Option<i64>) {
    tree_rows(app, "Employees", apply).await
}

/// Alice of Alpha and Bob of Beta, and Alpha's chart reaching into Beta:
/// Dev (Beta) reports to Lead (Alpha); Solo (Beta) reports to nobody.
async fn two_organisations_charts(app: &TestApp) {
    let (alpha, beta) = (
        app.organisation("Alpha").await,
        app.organisation("Beta").await,
    );
    let alice = app
        .create_user("alice@example.org", crate::helpers::PASSWORD)
        .await;
    let bob = app
        .create_user("bob@example.org", crate::helpers::PASSWORD)
        .await;
    for (org, user) in [(alpha, alice), (beta, bob)] {
        let join = app
            .db
            .query("INSERT INTO organisation_user (organisation_id, user_id) VALUES ($1, $2)")
            .bind(org)
            .bind(user);
        app.execute(join).await;
    }
    // Alpha's chart reaches into Beta: Dev (Beta) reports to Lead (Alpha).
    employee(app, 1, alpha, None, "Root").await;
    employee(app, 2, alpha, Some(1), "Lead").await;
    employee(app, 3, beta, Some(2), "Dev").await;
    employee(app, 4, beta, Some(3), "Intern").await;
    employee(app, 5, beta, None, "Solo").await;
}

#[rocket::async_test]
async fn the_callers_scope_cuts_the_tree_before_anything_is_computed() {
    let app = crate::helpers::spawn_app().await;
    two_organisations_charts(&app).await;
    let apply = format!(
        "{TOP}(HierarchyNodes=$root/Employees,HierarchyQualifier='OrgChart',NodeProperty='id')"
    );
    let guest = app.odata(&format!("Employees?$apply={apply}")).await;
    assert_eq!(guest.status.code, 401, "{}", guest.body);

    assert_eq!(
        app.login("alice@example.org", crate::helpers::PASSWORD)
            .await
            .code,
        200
    );
    let (rows, count) = chart(&app, &apply).await;
    let lead_is_a_leaf = vec![
        (1, "expanded".to_owned(), 0, 1),
        (2, "leaf".to_owned(), 1, 0),
    ];
    assert_eq!(rows, lead_is_a_leaf, "Beta's people are not Alice's to see");
    assert_eq!(count, Some(2));
    app.logout().await;

    assert_eq!(
        app.login("bob@example.org", crate::helpers::PASSWORD)
            .await
            .code,
        200
    );
    let (rows, count) = chart(&app, &apply).await;
    let dev_is_a_root = vec![
        (3, "expanded".to_owned(), 0, 1),
        (4, "leaf".to_owned(), 1, 0),
        (5, "leaf".to_owned(), 0, 0),
    ];
    assert_eq!(rows, dev_is_a_root, "a manager out of scope makes a root");
    assert_eq!(count, Some(3));
}

/// The staff, and an orphan: Zed's manager (99) is no row of the set.
const WITH_ORPHAN: &[Member] = &[
    m(1, "Ada", None),
    m(2, "Bob", None),
    m(3, "Cy", Some(1)),
    m(30, "Orphan", Some(99)),
    m(31, "Zed", Some(30)),
];

/// The ids, depths and drill states of `apply` over `Staff`, and the count.
async fn staff(app: &TestApp, apply: &str) -> (Vec<(i64, i64, String)>, Option<i64>) {
    let (rows, count) = tree_rows(app, "Staff", apply).await;
    let rows = rows
        .into_iter()
        .map(|(id, drill, depth, _)| (id, depth, drill))
        .collect();
    (rows, count)
}

#[rocket::async_test]
async fn null_parent_roots_are_the_nodes_without_a_parent_and_orphans_are_not() {
    let descendants =
        |id: i64| format!("descendants($root/Staff,OrgChart,id,filter(id eq {id}),1)");
    let leaf = |id| (id, 0, "leaf".to_owned());
    let orphans_root = spawn_tree_of(WITH_ORPHAN, SETS).await;
    let (rows, count) = staff(&orphans_root, &top_levels(",Levels=1")).await;
    let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(
        ids,
        [1, 2, 30],
        "by default a missing parent makes a root: {rows:?}"
    );
    assert_eq!(count, Some(3));
    let (rows, _) = staff(&orphans_root, &descendants(30)).await;
    assert_eq!(rows, [(31, 1, "leaf".to_owned())]);

    let sets = SETS.replace(
        r#"parent = "manager" }"#,
        r#"parent = "manager", roots = "null_parent" }"#,
    );
    let null_parent = spawn_tree_of(WITH_ORPHAN, Box::leak(sets.into_boxed_str())).await;
    let (rows, count) = staff(&null_parent, &top_levels(",Levels=1")).await;
    assert_eq!(rows, [(1, 0, "collapsed".to_owned()), leaf(2)]);
    assert_eq!(count, Some(2));
    let (rows, count) = staff(&null_parent, &top_levels("")).await;
    let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(
        ids,
        [1, 3, 2],
        "the whole tree, without the orphan's: {rows:?}"
    );
    assert_eq!(count, Some(3));
    let (rows, count) = staff(&null_parent, &descendants(1)).await;
    assert_eq!(rows, [(3, 1, "leaf".to_owned())]);
    assert_eq!(count, Some(1));
    let (rows, count) = staff(&null_parent, &descendants(30)).await;
    assert_eq!(
        (rows, count),
        (vec![], Some(0)),
        "no root reaches the orphan"
    );
}

/// Keys on both sides of zero and at both ends of 64 bits: siblings come
/// in the keys' numeric order, not their text's.
const SIGNED: &[Member] = &[
    m(-3, "Minus", None),
    m(4, "Four", None),
    m(10, "Ten", Some(-3)),
    m(-7, "MinusSeven", Some(-3)),
    m(0, "Zero", Some(-3)),
    m(i64::MAX, "Max", Some(0)),
    m(i64::MIN, "Min", Some(0)),
    m(-1, "MinusOne", Some(0)),
    m(9, "Nine", Some(4)),
];

#[rocket::async_test]
async fn siblings_come_in_numeric_key_order_across_the_sign_and_64_bits() {
    let app = spawn_tree_of(SIGNED, SETS).await;
    let (rows, count) = tree_rows(&app, "Staff", &top_levels("")).await;
    let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(ids, [-3, -7, 0, i64::MIN, -1, i64::MAX, 10, 4, 9]);
    assert_eq!(count, Some(9));
    let below: Vec<(i64, i64)> = rows.iter().map(|r| (r.0, r.3)).collect();
    assert_eq!(below[..3], [(-3, 6), (-7, 0), (0, 3)], "{below:?}");
    let descendants = "descendants($root/Staff,OrgChart,id,filter(id eq 0 or id eq 4),1)";
    let (rows, _) = tree_rows(&app, "Staff", descendants).await;
    let ids: Vec<i64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(ids, [i64::MIN, -1, i64::MAX, 9], "by parent, then key");
}

#[rocket::async_test]
async fn an_unknown_kind_of_roots_is_refused_at_start() {
    let sets = SETS.replace(
        r#"parent = "manager" }"#,
        r#"parent = "manager", roots = "orphans" }"#,
    );
    let database = TestDb::new().await;
    let figment = crate::helpers::figment(&database.url).merge(Toml::string(&sets));
    let started =
        rocket::local::asynchronous::Client::untracked(gatehouse_host::rocket(figment)).await;
    let Err(error) = started else {
        panic!("`roots` is `null_parent` or `missing_parent`: the host ignited");
    };
    let refused = matches!(error.kind(), rocket::error::ErrorKind::FailedFairings(_));
    assert!(refused, "the Gatehouse fairing refuses it");
}

#[rocket::async_test]
async fn with_null_parent_roots_a_scoped_caller_sees_only_the_trees_of_their_own_roots() {
    let app = crate::helpers::spawn_host(|figment| {
        let sets = gatehouse_host::odata::sets().map(|set| match set.name.as_str() {
            "Employees" => set.hierarchy_roots(gatehouse::odata::Roots::NullParent),
            _ => set,
        });
        let gatehouse = sets
            .into_iter()
            .fold(gatehouse::Gatehouse::new(), gatehouse::Gatehouse::odata_set);
        crate::custom_host::host(figment, gatehouse)
    })
    .await;
    two_organisations_charts(&app).await;
    let apply = format!(
        "{TOP}(HierarchyNodes=$root/Employees,HierarchyQualifier='OrgChart',NodeProperty='id')"
    );
    let password = crate::helpers::PASSWORD;
    assert_eq!(app.login("alice@example.org", password).await.code, 200);
    let (rows, count) = chart(&app, &apply).await;
    let alphas = vec![
        (1, "expanded".to_owned(), 0, 1),
        (2, "leaf".to_owned(), 1, 0),
    ];
    assert_eq!((rows, count), (alphas, Some(2)));
    app.logout().await;

    assert_eq!(app.login("bob@example.org", password).await.code, 200);
    let (rows, count) = chart(&app, &apply).await;
    let solo = vec![(5, "leaf".to_owned(), 0, 0)];
    assert_eq!(
        (rows, count),
        (solo, Some(1)),
        "Dev's manager is out of Bob's scope: with null_parent roots Dev is no root"
    );
}
