use super::*;
use crate::odata::model::fixture::model;
use crate::odata::parse_query;

fn check(set: &str, query: &str) -> Result<(), QueryError> {
    let model = model();
    let set = model.find(set).expect("set in fixture");
    check_query(&model, set, &parse_query(query).expect("parses")).map(|_| ())
}

fn refused(query: &str) -> (&'static str, String, String) {
    let e = check("Users", query).expect_err("refused");
    (e.code, e.target, e.message)
}

#[test]
fn well_typed_queries_pass() {
    for q in [
        "$filter=name eq 'x' and age gt 3 or email eq null",
        "$filter=age add 1 gt 2.5 and score mul 2 le 10 and weight divby 2 lt 1e1",
        "$filter=rank eq age and age mod 2 eq 0 and -age lt 0 and not active",
        "$filter=null eq null",
        "$filter=age in (1, 2, null)",
        "$filter=contains(name, 'a') and startswith(email, 'b') and endswith(name, 'c')",
        "$filter=length(name) eq 3 and indexof(name, 'x') ge 0",
        "$filter=substring(name, 1) eq 'a' and substring(name, 1, 2) eq 'b'",
        "$filter=tolower(name) eq toupper(trim(concat(name, email)))",
        "$filter=year(born) eq 2000 and month(created) eq 1 and day(born) eq 2",
        "$filter=hour(wakes) eq 7 and minute(created) eq 0 and second(wakes) eq 0",
        "$filter=date(created) eq 2024-01-02 and time(created) lt 12:00:00",
        "$filter=created lt now() and round(score) eq 1 and floor(weight) eq ceiling(age)",
        "$filter=token eq 01234567-89ab-cdef-0123-456789abcdef",
        "$filter=organisation/name eq 'Acme' and organisation/parent/name ne null",
        "$filter=posts/any(p: p/likes gt 3 and p/author/name eq name) and posts/any()",
        "$filter=posts/all(p: contains(p/title, 'x'))",
        "$orderby=organisation/name desc,age&$select=name,age&$search=foo",
        "$expand=posts($filter=likes gt 1;$orderby=title),organisation($select=name)",
    ] {
        assert_eq!(check("Users", q), Ok(()), "{q}");
    }
}

#[test]
fn unknown_names_are_refused_with_their_option() {
    for (q, target) in [
        ("$filter=nmae eq 'x'", "$filter"),
        ("$filter=organisation/nmae eq 'x'", "$filter"),
        ("$filter=nowhere/name eq 'x'", "$filter"),
        ("$orderby=nmae", "$orderby"),
        ("$select=nmae", "$select"),
        ("$select=organisation/name", "$select"),
        ("$expand=nowhere", "$expand"),
        ("$expand=posts($filter=nmae eq 1)", "$expand"),
        ("$expand=posts($select=nmae)", "$expand"),
        ("$filter=posts/any(p: p/nmae eq 1)", "$filter"),
    ] {
        let (code, t, _) = refused(q);
        assert_eq!((code, t.as_str()), ("unknown_property", target), "{q}");
    }
}

#[test]
fn type_mismatches_are_refused() {
    for q in [
        "$filter=name eq 5",
        "$filter=age eq 'x'",
        "$filter=born eq created",
        "$filter=age",
        "$filter=name and active",
        "$filter=not name",
        "$filter=-name eq 'x'",
        "$filter=name add 1 eq 2",
        "$filter=age in ('a')",
        "$filter=contains(age, 'x')",
        "$filter=length(age) eq 1",
        "$filter=substring(name, 'x') eq 'y'",
        "$filter=year(name) eq 1",
        "$filter=hour(born) eq 1",
        "$filter=date(born) eq 2024-01-01",
        "$filter=round(name) eq 1",
        "$filter=posts/any(p: p/likes)",
        "$expand=posts($filter=title eq 1)",
    ] {
        let (code, _, _) = refused(q);
        assert_eq!(code, "type_mismatch", "{q}");
    }
}

#[test]
fn paths_must_end_in_a_property() {
    for q in [
        "$filter=organisation eq null",
        "$filter=posts/likes eq 1",
        "$filter=posts/any(p: p eq null)",
        "$filter=organisation/any(o: true)",
    ] {
        let (code, t, _) = refused(q);
        assert_eq!((code, t.as_str()), ("not_a_property", "$filter"), "{q}");
    }
    let (code, _, msg) = refused("$filter=posts eq null");
    assert_eq!(code, "type_mismatch");
    assert!(msg.contains("any or all"), "{msg}");
}

#[test]
fn search_needs_searchable_properties() {
    let e = check("Organisations", "$search=acme").expect_err("refused");
    assert_eq!(
        (e.code, e.target.as_str()),
        ("search_unsupported", "$search")
    );
    let e = check("Users", "$expand=organisation($search=acme)").expect_err("refused");
    assert_eq!(
        (e.code, e.target.as_str()),
        ("search_unsupported", "$expand")
    );
}

#[test]
fn ordering_by_a_collection_is_refused() {
    let (code, target, msg) = refused("$orderby=posts");
    assert_eq!((code, target.as_str()), ("not_sortable", "$orderby"));
    assert_eq!(msg, "cannot order by the collection 'posts'");
    let (code, _, _) = refused("$orderby=organisation");
    assert_eq!(code, "not_a_property");
}

#[test]
fn messages_speak_of_the_model_not_of_sql() {
    let (_, _, msg) = refused("$filter=name eq 5");
    assert_eq!(msg, "'eq' cannot combine Edm.String and Edm.Int64");
    let (_, _, msg) = refused("$filter=nmae eq 'x'");
    assert_eq!(msg, "Users has no property 'nmae'");
    let (_, _, msg) = refused("$filter=contains(age, 'x')");
    assert_eq!(msg, "contains() cannot take Edm.Int32 as argument 1");
    for q in ["$filter=name eq 5", "$orderby=posts", "$select=x"] {
        let (_, _, msg) = refused(q);
        for word in ["SELECT", "column", "table", "users"] {
            assert!(!msg.contains(word), "{msg}");
        }
    }
}

#[test]
fn a_checked_query_holds_resolved_paths_and_types() {
    use crate::odata::check::typed::Node;
    use crate::odata::model::sets::EdmType;
    let model = model();
    let users = model.find("Users").expect("fixture");
    let q = parse_query(
        "$select=age&$filter=organisation/name eq 'A' and age add 1 gt 2\
         &$orderby=organisation/name desc&$search=x\
         &$expand=posts($select=title;$orderby=likes;$top=2)",
    )
    .expect("parses");
    let checked = check_query(&model, users, &q).expect("fits");
    let names = |ps: &[&crate::odata::Property]| -> Vec<String> {
        ps.iter().map(|p| p.name.clone()).collect()
    };
    assert_eq!(names(checked.selected()), ["id", "age"]);

    let filter = checked.filter().expect("a filter");
    assert_eq!(filter.ty(), Some(EdmType::Boolean));
    let Node::Binary { left, right, .. } = filter.node() else {
        panic!("{filter:?}");
    };
    let Node::Binary { left: name, .. } = left.node() else {
        panic!("{left:?}");
    };
    let Node::Property(path) = name.node() else {
        panic!("{name:?}");
    };
    assert_eq!(path.hops.len(), 1);
    assert_eq!(path.hops[0].column, "org_id");
    assert_eq!(path.hops[0].to.name, "Organisations");
    assert_eq!(path.property.name, "name");
    let Node::Binary { left: sum, .. } = right.node() else {
        panic!("{right:?}");
    };
    // Int32 plus an integer literal (Int64) is Int64.
    assert_eq!(sum.ty(), Some(EdmType::Int64));

    let order = &checked.orderby()[0];
    assert!(order.descending);
    assert!(order.path.same_as(path));
    let search = checked.search().expect("a search");
    assert_eq!(names(&search.properties), ["name", "email"]);

    let posts = &checked.expand()[0];
    assert_eq!(
        (posts.nav().name.as_str(), posts.target().name.as_str()),
        ("posts", "Posts")
    );
    assert_eq!(posts.options().top, Some(2));
    assert_eq!(names(posts.checked().selected()), ["id", "title"]);
    assert_eq!(posts.checked().orderby()[0].path.property.name, "likes");
}
