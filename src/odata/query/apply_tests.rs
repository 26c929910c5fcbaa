use super::*;
use crate::odata::parse_query;

fn apply(value: &str) -> Apply {
    parse_query(&format!("$apply={value}"))
        .unwrap_or_else(|e| panic!("{value}: {e}"))
        .apply
        .expect("an $apply")
}

fn err(value: &str) -> (usize, String) {
    let e = parse_query(&format!("$apply={value}")).expect_err(value);
    assert_eq!(e.option, "$apply", "{value}");
    (e.position, e.message)
}

#[test]
fn every_transformation_parses_and_prints_canonically() {
    let cases = [
        (
            "groupby((category),aggregate(price with sum as Total,$count as N))",
            "groupby((category),aggregate(price with sum as Total,$count as N))",
        ),
        (
            "filter(price gt 10)/groupby((category, owner/name))",
            "filter(price gt 10)/groupby((category,owner/name))",
        ),
        ("aggregate(price with average as Mean)", "aggregate(price with average as Mean)"),
        (
            "search(blue OR red)/aggregate(id with countdistinct as Ids)",
            "search(blue OR red)/aggregate(id with countdistinct as Ids)",
        ),
        (
            "groupby((a),aggregate(b with min as Lo,b with max as Hi))/orderby(Lo desc,a)/skip(2)/top(3)",
            "groupby((a),aggregate(b with min as Lo,b with max as Hi))/orderby(Lo desc,a)/skip(2)/top(3)",
        ),
        (
            "groupby((a),aggregate(b with sum as S))/filter(S gt 1)/orderby(S desc)/concat(aggregate($count as UI5__count),identity)",
            "groupby((a),aggregate(b with sum as S))/filter(S gt 1)/orderby(S desc)/concat(aggregate($count as UI5__count),identity)",
        ),
        (
            "concat(aggregate(price with sum as price),groupby((category),aggregate(price with sum as price))/concat(aggregate($count as UI5__count),top(100)))",
            "concat(aggregate(price with sum as price),groupby((category),aggregate(price with sum as price))/concat(aggregate($count as UI5__count),top(100)))",
        ),
    ];
    for (sent, printed) in cases {
        let parsed = apply(sent);
        assert_eq!(parsed.to_string(), printed, "{sent}");
        assert_eq!(apply(printed), parsed, "{printed} parses back");
    }
}

#[test]
fn the_tree_says_what_was_asked() {
    let parsed = apply("filter(a eq 'x/y')/groupby((c),aggregate(p with sum as T))/top(5)");
    let [Transformation::Filter(_), Transformation::GroupBy { paths, then }, Transformation::Top(5)] =
        parsed.0.as_slice()
    else {
        panic!("{parsed:?}");
    };
    assert_eq!(paths, &[Path::single("c")]);
    let Some(Apply(steps)) = then else {
        panic!("an aggregate per group")
    };
    assert_eq!(
        steps,
        &[Transformation::Aggregate(vec![Aggregate {
            expr: AggregateExpr::Method {
                path: Path::single("p"),
                method: Method::Sum
            },
            alias: "T".into()
        }])]
    );
}

#[test]
fn apply_survives_the_query_string() {
    let raw = "$apply=filter(name%20eq%20'A%26B%2FC')/groupby((category),aggregate(price%20with%20sum%20as%20Total))&$top=2";
    let query = parse_query(raw).expect("parses");
    assert_eq!(parse_query(&query.to_query_string()), Ok(query.clone()));
    assert!(query.to_query_string().starts_with("$apply=filter("));
}

#[test]
fn refusals_name_apply_and_point_into_its_value() {
    let cases = [
        ("pivot(a)", 0, "the transformation pivot is not supported"),
        ("compute(a mul 2 as b)", 0, "the transformation compute is not supported"),
        ("groupby(a)", 8, "expected '(' and the grouping properties"),
        ("groupby((a)", 7, "missing ')'"),
        ("groupby((a)x)", 11, "expected ',' or ')'"),
        ("groupby((rollup(type,name)),aggregate($count as N))", 9, "the grouping rollup(...) is not supported: group by properties"),
        ("groupby((a,rollup(b,c)))", 11, "the grouping rollup(...) is not supported: group by properties"),
        ("aggregate(price)", 10, "custom aggregates are not supported: name a method with 'with'"),
        ("aggregate(price with median as M)", 21, "the aggregation method median is not supported (sum, min, max, average, countdistinct)"),
        ("aggregate(price with sum)", 10, "expected 'property with method as Alias' or '$count as Alias'"),
        ("aggregate(a with sum as X,b with sum as X)", 26, "the alias X is used twice"),
        ("top(-1)", 4, "in top(...): must be a non-negative integer"),
        ("concat(top(1))", 7, "concat needs two or more sequences"),
        ("filter(a eq)/top(1)", 11, "in filter(...): expected an expression, found the end"),
        ("top(1)/", 7, "expected a transformation such as groupby(...)"),
        ("(a)", 0, "expected a transformation name"),
    ];
    for (value, position, message) in cases {
        assert_eq!(err(value), (position, message.to_owned()), "{value}");
    }
    assert_eq!(
        parse_query("$expand=a($apply=top(1))").unwrap_err().message,
        "$apply is not allowed inside $expand"
    );
}

#[test]
fn nesting_and_size_are_bounded() {
    let deep = "concat(top(1),concat(top(1),concat(top(1),concat(top(1),top(2)))))";
    assert!(parse_query(&format!("$apply={deep}")).is_ok());
    let deeper =
        "concat(top(1),concat(top(1),concat(top(1),concat(top(1),concat(top(1),top(2))))))";
    assert!(err(deeper).1.contains("nests more than 4 levels"));
    let many = vec!["top(1)"; MAX_TRANSFORMATIONS + 1].join("/");
    assert!(err(&many).1.contains("more than 32 transformations"));
}

#[test]
fn the_hierarchy_functions_parse_as_ui5_writes_them_and_print_canonically() {
    let top = "com.sap.vocabularies.Hierarchy.v1.TopLevels(HierarchyNodes=$root/Employees,\
               HierarchyQualifier='OrgChart',NodeProperty='id',Levels=2,\
               ExpandLevels=[{\"NodeID\":\"7\",\"Levels\":1},{\"NodeID\":12,\"Levels\":null}])";
    let Apply(steps) = apply(top);
    let [Transformation::TopLevels(t)] = steps.as_slice() else {
        panic!("{steps:?}")
    };
    assert_eq!(
        (
            t.nodes.as_str(),
            t.qualifier.as_str(),
            t.node_property.as_str()
        ),
        ("Employees", "OrgChart", "id")
    );
    assert_eq!(t.levels, Some(2));
    assert_eq!(t.expand_levels.len(), 2);
    assert_eq!(t.expand_levels[0].levels, Some(1));
    assert_eq!(t.expand_levels[1].levels, None);
    assert_eq!(apply(&Apply(steps.clone()).to_string()), Apply(steps));

    let filtered =
        "ancestors($root/Employees,OrgChart,id,filter(name eq 'Ada')/search(lead),keep start)/\
                    com.sap.vocabularies.Hierarchy.v1.TopLevels(HierarchyNodes=$root/Employees,\
                    HierarchyQualifier='OrgChart',NodeProperty='id',Levels=1)";
    let Apply(steps) = apply(filtered);
    let [Transformation::Related(r), Transformation::TopLevels(_)] = steps.as_slice() else {
        panic!("{steps:?}")
    };
    assert_eq!(r.direction, Direction::Ancestors);
    assert!(r.keep_start && r.distance.is_none());
    assert_eq!(r.start.0.len(), 2);
    assert_eq!(apply(&Apply(steps.clone()).to_string()), Apply(steps));

    let children = "descendants($root/Employees,OrgChart,id,filter(id eq 7),1)/orderby(name desc)";
    let Apply(steps) = apply(children);
    let [Transformation::Related(r), Transformation::OrderBy(_)] = steps.as_slice() else {
        panic!("{steps:?}")
    };
    assert_eq!(
        (r.direction, r.distance, r.keep_start),
        (Direction::Descendants, Some(1), false)
    );
    assert_eq!(Apply(steps.clone()).to_string(), children);
}

#[test]
fn hierarchy_functions_with_wrong_arguments_are_refused_by_name() {
    let top = "com.sap.vocabularies.Hierarchy.v1.TopLevels";
    let cases = [
        (format!("{top}(HierarchyQualifier='Q',NodeProperty='id')"), "TopLevels needs HierarchyNodes"),
        (format!("{top}(HierarchyNodes=$root/E,HierarchyQualifier='Q',NodeProperty='id',Depth=2)"), "the TopLevels parameter Depth is not supported"),
        (format!("{top}(HierarchyNodes=E,HierarchyQualifier='Q',NodeProperty='id')"), "expected $root/"),
        (format!("{top}(HierarchyNodes=$root/E,HierarchyQualifier='Q',NodeProperty='id',ExpandLevels=[{{\"NodeID\":true}}])"), "NodeID must be"),
        (format!("{top}(HierarchyNodes=$root/E,HierarchyQualifier='Q',NodeProperty='id',ExpandLevels={{}})"), "expected a JSON array"),
        ("descendants($root/E,Q,id)".to_owned(), "expected $root/SET"),
        ("descendants($root/E,Q,id,orderby(id),1)".to_owned(), "filter and search only"),
        ("ancestors($root/E,Q,id,filter(id eq 1),keep start,2)".to_owned(), "expected a distance or keep start"),
    ];
    for (value, expected) in cases {
        let (_, message) = err(&value);
        assert!(message.contains(expected), "{value}: {message}");
    }
}
