//! The service's self-description: the CSDL XML document (`GET
//! /odata/$metadata`) and the JSON service document (`GET /odata/`), both
//! limited to the entity sets the caller may read. Pure: the caller decides
//! which sets are visible through a predicate.
//!
//! Each visible set gets an entity type of the same name in the `Gatehouse`
//! namespace. Navigations that lead to a set the caller may not read are left
//! out, so the document never names a type it does not declare.
//!
//! ```
//! use gatehouse::odata::{metadata_xml, service_document, EdmType, EntitySet, Model, Property};
//! let model = Model::new().set(
//!     EntitySet::new("Pets", "pets", "id").property(Property::new("id", EdmType::Int32).not_null()),
//! );
//! let xml = metadata_xml(&model, |_| true);
//! assert!(xml.contains(r#"<EntitySet Name="Pets" EntityType="Gatehouse.Pets">"#));
//! let doc = service_document(&model, "http://h", |_| true);
//! assert_eq!(doc["value"][0]["url"], "Pets");
//! ```

use std::fmt::Write;

use serde_json::{json, Value};

use crate::odata::model::annotations;
use crate::odata::model::sets::{EntitySet, Model};

/// Where the Data Aggregation vocabulary is published.
const AGGREGATION_VOCABULARY: &str =
    "https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Aggregation.V1.xml";

/// What `$apply` every set answers (`Org.OData.Aggregation.V1.ApplySupported`).
const APPLY_SUPPORTED: &str = concat!(
    r#"<Annotation Term="Aggregation.ApplySupported"><Record>"#,
    r#"<PropertyValue Property="Transformations"><Collection>"#,
    "<String>filter</String><String>search</String><String>groupby</String>",
    "<String>aggregate</String><String>orderby</String><String>top</String>",
    "<String>skip</String><String>concat</String><String>identity</String>",
    "</Collection></PropertyValue>",
    r#"<PropertyValue Property="Rollup" EnumMember="Aggregation.RollupType/None"/>"#,
    "</Record></Annotation>"
);

/// The schema namespace every entity type is declared in.
pub const NAMESPACE: &str = "Gatehouse";

/// The CSDL (OData 4.0) XML document describing the sets of `model` for which
/// `visible` returns true: an `EntityType` per set (key, properties with
/// their EDM types and nullability, navigation properties) and an
/// `EntityContainer` named `Container` with an `EntitySet` per set, its
/// `NavigationPropertyBinding`s and the `$apply` it answers
/// (`Org.OData.Aggregation.V1.ApplySupported`). Every name is XML-escaped.
pub fn metadata_xml(model: &Model, visible: impl Fn(&EntitySet) -> bool) -> String {
    let sets: Vec<&EntitySet> = model.sets.iter().filter(|s| visible(s)).collect();
    let shown = |name: &str| sets.iter().any(|s| s.name == name);
    let mut out = String::new();
    out.push_str(r#"<?xml version="1.0" encoding="utf-8"?>"#);
    out.push_str(
        r#"<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">"#,
    );
    let _ = write!(
        out,
        r#"<edmx:Reference Uri="{AGGREGATION_VOCABULARY}"><edmx:Include Namespace="Org.OData.Aggregation.V1" Alias="Aggregation"/></edmx:Reference>"#
    );
    if sets.iter().any(|s| s.hierarchy.is_some()) {
        out.push_str(annotations::REFERENCES);
    }
    out.push_str("<edmx:DataServices>");
    let _ = write!(
        out,
        r#"<Schema xmlns="http://docs.oasis-open.org/odata/ns/edm" Namespace="{NAMESPACE}">"#
    );
    for set in &sets {
        let _ = write!(out, r#"<EntityType Name="{}">"#, escape(&set.name));
        let _ = write!(
            out,
            r#"<Key><PropertyRef Name="{}"/></Key>"#,
            escape(&set.key)
        );
        for p in &set.properties {
            let _ = write!(
                out,
                r#"<Property Name="{}" Type="{}""#,
                escape(&p.name),
                p.edm_type.name()
            );
            if !p.nullable {
                out.push_str(r#" Nullable="false""#);
            }
            out.push_str("/>");
        }
        for n in set.navigations.iter().filter(|n| shown(&n.target_set)) {
            let target = format!("{NAMESPACE}.{}", escape(&n.target_set));
            let ty = if n.is_collection() {
                format!("Collection({target})")
            } else {
                target
            };
            let _ = write!(
                out,
                r#"<NavigationProperty Name="{}" Type="{ty}"/>"#,
                escape(&n.name)
            );
        }
        out.push_str(&annotations::entity_type(set, escape));
        out.push_str("</EntityType>");
    }
    out.push_str(r#"<EntityContainer Name="Container">"#);
    for set in &sets {
        let name = escape(&set.name);
        let _ = write!(
            out,
            r#"<EntitySet Name="{name}" EntityType="{NAMESPACE}.{name}">"#
        );
        for n in set.navigations.iter().filter(|n| shown(&n.target_set)) {
            let _ = write!(
                out,
                r#"<NavigationPropertyBinding Path="{}" Target="{}"/>"#,
                escape(&n.name),
                escape(&n.target_set)
            );
        }
        out.push_str(APPLY_SUPPORTED);
        out.push_str(&annotations::entity_set(set));
        out.push_str("</EntitySet>");
    }
    out.push_str("</EntityContainer></Schema></edmx:DataServices></edmx:Edmx>");
    out
}

/// The JSON service document listing the sets of `model` for which `visible`
/// returns true: `@odata.context` is `<base_url>/odata/$metadata` and `value`
/// holds `{name, kind: "EntitySet", url}` per set, `url` relative to
/// `<base_url>/odata/`.
pub fn service_document(
    model: &Model,
    base_url: &str,
    visible: impl Fn(&EntitySet) -> bool,
) -> Value {
    let value: Vec<Value> = model
        .sets
        .iter()
        .filter(|s| visible(s))
        .map(|s| json!({"name": s.name, "kind": "EntitySet", "url": s.name}))
        .collect();
    json!({
        "@odata.context": format!("{}/odata/$metadata", base_url.trim_end_matches('/')),
        "value": value,
    })
}

/// `text` with the five XML special characters replaced by entities.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::odata::model::fixture::model;
    use crate::odata::{EdmType, Navigation, Property};

    fn all() -> String {
        metadata_xml(&model(), |_| true)
    }

    #[test]
    fn document_is_odata_4_with_one_schema_and_container() {
        let xml = all();
        assert!(xml.starts_with(r#"<?xml version="1.0" encoding="utf-8"?>"#));
        assert!(xml.contains(
            r#"<edmx:Edmx xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx" Version="4.0">"#
        ));
        assert_eq!(xml.matches("<Schema ").count(), 1);
        assert!(xml.contains(r#"Namespace="Gatehouse">"#));
        assert_eq!(
            xml.matches(r#"<EntityContainer Name="Container">"#).count(),
            1
        );
        assert!(xml.ends_with("</EntityContainer></Schema></edmx:DataServices></edmx:Edmx>"));
    }

    #[test]
    fn entity_types_carry_keys_types_and_nullability() {
        let xml = all();
        assert!(xml.contains(
            r#"<EntityType Name="Users"><Key><PropertyRef Name="id"/></Key><Property Name="id" Type="Edm.Int64" Nullable="false"/>"#
        ));
        assert!(xml.contains(r#"<Property Name="name" Type="Edm.String" Nullable="false"/>"#));
        assert!(xml.contains(r#"<Property Name="email" Type="Edm.String"/>"#));
        assert!(xml.contains(r#"<Property Name="score" Type="Edm.Decimal"/>"#));
        assert!(xml
            .contains(r#"<Property Name="created" Type="Edm.DateTimeOffset" Nullable="false"/>"#));
        assert!(xml.contains(r#"<Property Name="token" Type="Edm.Guid"/>"#));
        assert!(xml.contains(r#"<Property Name="wakes" Type="Edm.TimeOfDay"/>"#));
        // Column names stay private.
        assert!(!xml.contains("display_name"));
        assert!(!xml.contains("org_id"));
    }

    #[test]
    fn navigations_are_typed_and_bound() {
        let xml = all();
        assert!(xml.contains(
            r#"<NavigationProperty Name="organisation" Type="Gatehouse.Organisations"/>"#
        ));
        assert!(xml
            .contains(r#"<NavigationProperty Name="posts" Type="Collection(Gatehouse.Posts)"/>"#));
        assert!(
            xml.contains(r#"<NavigationProperty Name="parent" Type="Gatehouse.Organisations"/>"#)
        );
        assert!(xml.contains(
            r#"<EntitySet Name="Users" EntityType="Gatehouse.Users"><NavigationPropertyBinding Path="organisation" Target="Organisations"/><NavigationPropertyBinding Path="posts" Target="Posts"/><Annotation Term="Aggregation.ApplySupported">"#
        ));
    }

    #[test]
    fn a_hierarchy_is_described_as_ui5_reads_it() {
        let staff = EntitySet::new("Staff", "staff", "id")
            .property(Property::new("id", EdmType::Int64).not_null())
            .navigation(Navigation::to_one("manager", "Staff", "manager_id"))
            .hierarchy("OrgChart", "manager");
        let xml = metadata_xml(&Model::new().set(staff), |_| true);
        assert!(xml.contains(
            r#"<edmx:Include Namespace="com.sap.vocabularies.Hierarchy.v1" Alias="Hierarchy"/>"#
        ));
        assert!(xml.contains(
            r#"<Annotation Term="Aggregation.RecursiveHierarchy" Qualifier="OrgChart"><Record><PropertyValue Property="NodeProperty" PropertyPath="id"/><PropertyValue Property="ParentNavigationProperty" NavigationPropertyPath="manager"/></Record></Annotation>"#
        ));
        assert!(xml.contains(r#"<Annotation Term="Hierarchy.RecursiveHierarchy" Qualifier="OrgChart"><Record><PropertyValue Property="DistanceFromRoot" Path="DistanceFromRoot"/><PropertyValue Property="DrillState" Path="DrillState"/>"#));
        assert!(xml.contains(
            r#"<Property Name="DrillState" Type="Edm.String"><Annotation Term="Core.Computed" Bool="true"/></Property>"#
        ));
        assert!(xml.contains(r#"<PropertyValue Property="NonFilterableProperties"><Collection><PropertyPath>DistanceFromRoot</PropertyPath>"#));
        assert!(xml.contains(r#"<PropertyValue Property="NonSortableProperties"><Collection><PropertyPath>DistanceFromRoot</PropertyPath>"#));
        let plain = all();
        assert!(
            !plain.contains("Hierarchy") && !plain.contains("Core.Computed"),
            "only a set with a hierarchy"
        );
    }

    #[test]
    fn every_set_says_which_apply_it_answers() {
        let xml = all();
        assert!(xml.contains(
            r#"<edmx:Include Namespace="Org.OData.Aggregation.V1" Alias="Aggregation"/>"#
        ));
        for transformation in [
            "filter",
            "search",
            "groupby",
            "aggregate",
            "orderby",
            "top",
            "skip",
        ] {
            assert!(
                xml.contains(&format!("<String>{transformation}</String>")),
                "{transformation}"
            );
        }
        assert_eq!(
            xml.matches("Aggregation.ApplySupported").count(),
            model().sets.len()
        );
    }

    #[test]
    fn only_allowed_sets_are_described() {
        let xml = metadata_xml(&model(), |s| s.public);
        assert!(xml.contains(r#"<EntityType Name="Posts">"#));
        assert!(xml.contains(&format!(
            r#"<EntitySet Name="Posts" EntityType="Gatehouse.Posts">{APPLY_SUPPORTED}</EntitySet>"#
        )));
        assert!(!xml.contains("Users"));
        assert!(!xml.contains("Organisations"));
        // The navigation to a hidden set is left out.
        assert!(!xml.contains("NavigationProperty"));
        let none = metadata_xml(&model(), |_| false);
        assert!(!none.contains("<EntityType") && !none.contains("<EntitySet"));
    }

    #[test]
    fn names_are_xml_escaped() {
        let m = Model::new().set(
            EntitySet::new("A<&>\"'", "t", "k\"")
                .property(Property::new("k\"", EdmType::Int32).not_null())
                .navigation(Navigation::to_one("n&", "A<&>\"'", "c")),
        );
        let xml = metadata_xml(&m, |_| true);
        let name = "A&lt;&amp;&gt;&quot;&apos;";
        assert!(xml.contains(&format!(r#"<EntityType Name="{name}">"#)));
        assert!(xml.contains(r#"<PropertyRef Name="k&quot;"/>"#));
        assert!(xml.contains(&format!(
            r#"<NavigationProperty Name="n&amp;" Type="Gatehouse.{name}"/>"#
        )));
        assert!(xml.contains(&format!(
            r#"<NavigationPropertyBinding Path="n&amp;" Target="{name}"/>"#
        )));
        assert!(!xml.contains("A<"));
    }

    #[test]
    fn service_document_lists_allowed_sets() {
        let doc = service_document(&model(), "https://example.test/", |s| {
            s.name != "Organisations"
        });
        assert_eq!(
            doc,
            json!({
                "@odata.context": "https://example.test/odata/$metadata",
                "value": [
                    {"name": "Users", "kind": "EntitySet", "url": "Users"},
                    {"name": "Posts", "kind": "EntitySet", "url": "Posts"},
                ],
            })
        );
        let empty = service_document(&model(), "http://h", |_| false);
        assert_eq!(empty["value"], json!([]));
    }
}
