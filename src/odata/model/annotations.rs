//! What `$metadata` says of a set's recursive hierarchy, as UI5 reads it:
//! the computed properties on the entity type (`Core.Computed`), the pair
//! `Org.OData.Aggregation.V1.RecursiveHierarchy` and
//! `com.sap.vocabularies.Hierarchy.v1.RecursiveHierarchy` with the
//! hierarchy's qualifier (the latter in the vocabulary's current spelling:
//! each computed property by `Path`), and, on the entity set, that none of
//! the computed properties can be filtered or sorted.

use std::fmt::Write;

use crate::odata::model::sets::{EntitySet, Hierarchy};

/// The vocabularies the annotations use, as `edmx:Reference`s.
pub const REFERENCES: &str = concat!(
    r#"<edmx:Reference Uri="https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Core.V1.xml"><edmx:Include Namespace="Org.OData.Core.V1" Alias="Core"/></edmx:Reference>"#,
    r#"<edmx:Reference Uri="https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Capabilities.V1.xml"><edmx:Include Namespace="Org.OData.Capabilities.V1" Alias="Capabilities"/></edmx:Reference>"#,
    r#"<edmx:Reference Uri="https://sap.github.io/odata-vocabularies/vocabularies/Hierarchy.xml"><edmx:Include Namespace="com.sap.vocabularies.Hierarchy.v1" Alias="Hierarchy"/></edmx:Reference>"#,
);

/// The computed properties and the two hierarchy annotations, inside the
/// set's `EntityType`; nothing for a set without a hierarchy.
pub fn entity_type(set: &EntitySet, escape: impl Fn(&str) -> String) -> String {
    let Some(hierarchy) = &set.hierarchy else {
        return String::new();
    };
    let mut out = String::new();
    for (name, edm_type) in Hierarchy::COMPUTED {
        let _ = write!(
            out,
            r#"<Property Name="{name}" Type="{}"><Annotation Term="Core.Computed" Bool="true"/></Property>"#,
            edm_type.name()
        );
    }
    let qualifier = escape(&hierarchy.qualifier);
    let _ = write!(
        out,
        r#"<Annotation Term="Aggregation.RecursiveHierarchy" Qualifier="{qualifier}"><Record><PropertyValue Property="NodeProperty" PropertyPath="{}"/><PropertyValue Property="ParentNavigationProperty" NavigationPropertyPath="{}"/></Record></Annotation>"#,
        escape(&set.key),
        escape(&hierarchy.parent)
    );
    let _ = write!(
        out,
        r#"<Annotation Term="Hierarchy.RecursiveHierarchy" Qualifier="{qualifier}"><Record>"#
    );
    for (name, _) in Hierarchy::COMPUTED {
        let _ = write!(out, r#"<PropertyValue Property="{name}" Path="{name}"/>"#);
    }
    out.push_str("</Record></Annotation>");
    out
}

/// Inside the set's `EntitySet`: its computed properties are neither
/// filterable nor sortable; nothing for a set without a hierarchy.
pub fn entity_set(set: &EntitySet) -> String {
    if set.hierarchy.is_none() {
        return String::new();
    }
    let paths: String = Hierarchy::COMPUTED
        .iter()
        .map(|(name, _)| format!("<PropertyPath>{name}</PropertyPath>"))
        .collect();
    format!(
        concat!(
            r#"<Annotation Term="Capabilities.FilterRestrictions"><Record><PropertyValue Property="NonFilterableProperties"><Collection>{paths}</Collection></PropertyValue></Record></Annotation>"#,
            r#"<Annotation Term="Capabilities.SortRestrictions"><Record><PropertyValue Property="NonSortableProperties"><Collection>{paths}</Collection></PropertyValue></Record></Annotation>"#,
        ),
        paths = paths
    )
}
