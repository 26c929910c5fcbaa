use super::*;
use crate::odata::model::fixture::model;
use crate::odata::model::sets::EdmType;
use crate::odata::parse_query;

/// `apply` parsed.
fn parsed(apply: &str) -> Apply {
    let query = parse_query(&format!("$apply={apply}")).expect("parses");
    query.apply.expect("an $apply")
}

/// The code and message `apply` over `set` of the fixture is refused with.
fn refused(set: &str, apply: &str) -> (&'static str, String) {
    let (model, shapes, apply) = (model(), Shapes::default(), parsed(apply));
    let set = model.find(set).expect("set in fixture");
    match check_apply(&model, set, &apply, &shapes) {
        Ok(_) => panic!("{apply:?} passes"),
        Err(e) => {
            assert_eq!(e.target, "$apply");
            (e.code, e.message)
        }
    }
}

#[test]
fn what_follows_a_grouping_is_checked_against_the_rows_it_makes() {
    let (model, shapes) = (model(), Shapes::default());
    let users = model.find("Users").expect("set in fixture");
    let apply = parsed(
        "filter(age gt 1)/groupby((organisation/name),aggregate(age with sum as S))\
         /filter(S gt 1 and organisation/name ne null)/orderby(S desc)/top(2)",
    );
    let Ok(CheckedApply::Sequence(one)) = check_apply(&model, users, &apply, &shapes) else {
        panic!("one sequence");
    };
    assert_eq!(one.restriction.filters.len(), 1);
    assert!(one.grouping.reads_across());
    let rows: Vec<(&str, EdmType)> = one
        .rows()
        .properties
        .iter()
        .map(|p| (p.name.as_str(), p.edm_type))
        .collect();
    assert_eq!(
        rows,
        [
            ("organisation/name", EdmType::String),
            ("S", EdmType::Decimal)
        ]
    );
    let [Step::Filter(_), Step::Slice {
        top: 2,
        skip: 0,
        order,
    }] = one.steps.as_slice()
    else {
        panic!("a filter, then a slice");
    };
    let names: Vec<String> = order.iter().map(|o| o.path.to_string()).collect();
    assert_eq!(names, ["S", "organisation/name"]);
    assert_eq!(one.order, *order);
}

#[test]
fn the_branches_of_concat_share_their_properties() {
    let (model, shapes) = (model(), Shapes::default());
    let users = model.find("Users").expect("set in fixture");
    let apply = parsed("concat(aggregate($count as N),groupby((age)))");
    let Ok(CheckedApply::Concat(concat)) = check_apply(&model, users, &apply, &shapes) else {
        panic!("a concat");
    };
    assert_eq!(concat.branches.len(), 2);
    let all: Vec<(&str, bool)> = concat
        .properties
        .iter()
        .map(|p| (p.name.as_str(), p.nullable))
        .collect();
    assert_eq!(all, [("N", true), ("age", true)]);
}

#[test]
fn every_refusal_is_the_checks() {
    let cases = [
        ("Users", "orderby(age)/groupby((age))", "apply_unsupported"),
        ("Users", "groupby((age))/search(x)", "apply_unsupported"),
        ("Users", "filter(age gt 1)", "apply_unsupported"),
        ("Users", "groupby((age,age))", "invalid_apply"),
        ("Users", "groupby((posts))", "apply_unsupported"),
        (
            "Users",
            "groupby((age),aggregate($count as age))",
            "invalid_apply",
        ),
        (
            "Users",
            "groupby((age),aggregate(name with sum as S))",
            "type_mismatch",
        ),
        (
            "Users",
            "filter(age eq 'x')/groupby((age))",
            "type_mismatch",
        ),
        (
            "Organisations",
            "search(x)/groupby((name))",
            "search_unsupported",
        ),
        (
            "Users",
            "groupby((age),aggregate($count as N))/filter(name eq 'x')",
            "unknown_property",
        ),
        (
            "Users",
            "groupby((age),aggregate($count as N))/orderby(nope)",
            "unknown_property",
        ),
        (
            "Users",
            "concat(aggregate($count as N),aggregate(age with max as N))",
            "invalid_apply",
        ),
        (
            "Users",
            "concat(aggregate($count as __row),groupby((age)))",
            "invalid_apply",
        ),
        (
            "Organisations",
            "descendants($root/Organisations,Q,id,filter(id eq 1),1)",
            "invalid_apply",
        ),
    ];
    for (set, apply, code) in cases {
        assert_eq!(refused(set, apply).0, code, "{apply}");
    }
    assert_eq!(
        refused(
            "Users",
            "groupby((age),aggregate($count as N))/groupby((a/b))"
        )
        .1,
        "cannot group by the path 'a/b': name a property of Users"
    );
}
