//! The declared entity model: which entity sets exist, which table backs each,
//! which columns are exposed under which OData names and types, and how sets
//! are linked. Every identifier that reaches SQL comes from here, never from a
//! request.
//!
//! ```
//! use gatehouse::odata::{EdmType, EntitySet, Model, Navigation, Property};
//! let model = Model::new()
//!     .set(
//!         EntitySet::new("Users", "users", "id")
//!             .property(Property::new("id", EdmType::Int64).not_null())
//!             .property(Property::new("name", EdmType::String).column("display_name"))
//!             .navigation(Navigation::to_one("organisation", "Organisations", "org_id"))
//!             .searchable(&["name"]),
//!     )
//!     .set(
//!         EntitySet::new("Organisations", "organisations", "id")
//!             .property(Property::new("id", EdmType::Int64).not_null())
//!             .navigation(Navigation::to_many("users", "Users", "org_id")),
//!     );
//! let users = model.find("Users").unwrap();
//! let name = users.properties.iter().find(|p| p.name == "name").unwrap();
//! assert_eq!(name.column, "display_name");
//! ```

use crate::config::Roots;
use crate::odata::model::scope::{Caller, Scope};

/// The EDM primitive types a property may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EdmType {
    /// `Edm.String`
    String,
    /// `Edm.Int16`
    Int16,
    /// `Edm.Int32`
    Int32,
    /// `Edm.Int64`
    Int64,
    /// `Edm.Decimal`
    Decimal,
    /// `Edm.Double`
    Double,
    /// `Edm.Boolean`
    Boolean,
    /// `Edm.Date`
    Date,
    /// `Edm.DateTimeOffset`
    DateTimeOffset,
    /// `Edm.TimeOfDay`
    TimeOfDay,
    /// `Edm.Guid`
    Guid,
}

impl EdmType {
    /// How the database holds a value of this type.
    pub(crate) fn stored(self) -> crate::db::Stored {
        use crate::db::Stored;
        match self {
            EdmType::String => Stored::Text,
            EdmType::Int16 | EdmType::Int32 | EdmType::Int64 => Stored::Integer,
            EdmType::Decimal => Stored::Exact,
            EdmType::Double => Stored::Float,
            EdmType::Boolean => Stored::Boolean,
            EdmType::Date | EdmType::DateTimeOffset | EdmType::TimeOfDay => Stored::Temporal,
            EdmType::Guid => Stored::Uuid,
        }
    }

    /// The qualified name used in `$metadata`, such as `Edm.Int32`.
    ///
    /// ```
    /// assert_eq!(gatehouse::odata::EdmType::Int32.name(), "Edm.Int32");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            EdmType::String => "Edm.String",
            EdmType::Int16 => "Edm.Int16",
            EdmType::Int32 => "Edm.Int32",
            EdmType::Int64 => "Edm.Int64",
            EdmType::Decimal => "Edm.Decimal",
            EdmType::Double => "Edm.Double",
            EdmType::Boolean => "Edm.Boolean",
            EdmType::Date => "Edm.Date",
            EdmType::DateTimeOffset => "Edm.DateTimeOffset",
            EdmType::TimeOfDay => "Edm.TimeOfDay",
            EdmType::Guid => "Edm.Guid",
        }
    }

    /// Whether the type is an integer type.
    pub fn is_integer(self) -> bool {
        matches!(self, EdmType::Int16 | EdmType::Int32 | EdmType::Int64)
    }

    /// Whether the type is numeric (integer, decimal or double).
    pub fn is_numeric(self) -> bool {
        self.is_integer() || matches!(self, EdmType::Decimal | EdmType::Double)
    }
}

/// A structural property: an exposed column with its OData name and type.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Property {
    /// The name clients use.
    pub name: String,
    /// The column that stores it.
    pub column: String,
    /// Its EDM type.
    pub edm_type: EdmType,
    /// Whether the column may hold null.
    pub nullable: bool,
}

impl Property {
    /// A nullable property stored in a column of the same name.
    ///
    /// ```
    /// use gatehouse::odata::{EdmType, Property};
    /// let p = Property::new("email", EdmType::String).column("email_address").not_null();
    /// assert_eq!((p.column.as_str(), p.nullable), ("email_address", false));
    /// ```
    pub fn new(name: &str, edm_type: EdmType) -> Property {
        Property {
            name: name.to_owned(),
            column: name.to_owned(),
            edm_type,
            nullable: true,
        }
    }

    /// Stores the property in `column` instead.
    pub fn column(mut self, column: &str) -> Property {
        self.column = column.to_owned();
        self
    }

    /// Declares that the column never holds null.
    pub fn not_null(mut self) -> Property {
        self.nullable = false;
        self
    }
}

/// How a navigation links two sets.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum NavigationKind {
    /// At most one related entity: `column` on this set's table holds the
    /// target's key.
    ToOne {
        /// The foreign-key column on this table.
        column: String,
    },
    /// Any number of related entities: `remote_column` on the target's table
    /// holds this set's key.
    ToMany {
        /// The foreign-key column on the target table.
        remote_column: String,
    },
}

/// A navigation property: a named link to another entity set.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Navigation {
    /// The name clients use.
    pub name: String,
    /// The entity set the link leads to.
    pub target_set: String,
    /// Single- or collection-valued, and through which column.
    pub kind: NavigationKind,
}

impl Navigation {
    /// A single-valued navigation through foreign-key `column` on this table.
    ///
    /// ```
    /// use gatehouse::odata::Navigation;
    /// let n = Navigation::to_one("organisation", "Organisations", "org_id");
    /// assert!(!n.is_collection());
    /// ```
    pub fn to_one(name: &str, target_set: &str, column: &str) -> Navigation {
        Navigation {
            name: name.to_owned(),
            target_set: target_set.to_owned(),
            kind: NavigationKind::ToOne {
                column: column.to_owned(),
            },
        }
    }

    /// A collection-valued navigation: `remote_column` on the target's table
    /// holds this set's key.
    ///
    /// ```
    /// use gatehouse::odata::Navigation;
    /// assert!(Navigation::to_many("users", "Users", "org_id").is_collection());
    /// ```
    pub fn to_many(name: &str, target_set: &str, remote_column: &str) -> Navigation {
        Navigation {
            name: name.to_owned(),
            target_set: target_set.to_owned(),
            kind: NavigationKind::ToMany {
                remote_column: remote_column.to_owned(),
            },
        }
    }

    /// Whether the navigation leads to a collection.
    pub fn is_collection(&self) -> bool {
        matches!(self.kind, NavigationKind::ToMany { .. })
    }
}

/// An entity set: a table exposed as an OData collection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntitySet {
    /// The name in URLs (`/odata/<name>`).
    pub name: String,
    /// The backing table.
    pub table: String,
    /// The name of the key property.
    pub key: String,
    /// The exposed properties, in output order.
    pub properties: Vec<Property>,
    /// The navigation properties.
    pub navigations: Vec<Navigation>,
    /// The properties `$search` matches against (string properties).
    pub searchable: Vec<String>,
    /// Whether guests may read the set.
    pub public: bool,
    /// The filter bound to the caller that every access honours, if any.
    pub scope: Option<Scope>,
    /// The recursive hierarchy over the set (UI5's tree tables), if any.
    pub hierarchy: Option<Hierarchy>,
    /// For the rows a `$apply` made of another set: the statement that
    /// makes them, read in place of a table.
    pub(crate) derived: Option<Derived>,
}

/// A recursive hierarchy over a set: each node's parent is the row a to-one
/// navigation of the set to itself leads to (a null column makes a root),
/// named for `$apply`'s hierarchy functions by its qualifier.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Hierarchy {
    /// The qualifier of its annotations (`OrgChart`).
    pub qualifier: String,
    /// The navigation to the parent.
    pub parent: String,
    /// Which nodes are roots.
    pub roots: Roots,
}

impl Hierarchy {
    /// The properties a hierarchy's rows carry besides the set's own, all
    /// computed: `(name, type)`.
    pub(crate) const COMPUTED: [(&'static str, EdmType); 6] = [
        ("DistanceFromRoot", EdmType::Int64),
        ("DrillState", EdmType::String),
        ("LimitedDescendantCount", EdmType::Int64),
        ("LimitedRank", EdmType::Int64),
        ("Matched", EdmType::Boolean),
        ("MatchedDescendantCount", EdmType::Int64),
    ];
}

/// The statement whose rows a derived set reads (numbered placeholders
/// `$1..$n`, its binds first in every statement over the set).
#[derive(Debug, Clone)]
pub(crate) struct Derived {
    /// The statement.
    pub text: String,
    /// Its binds.
    pub binds: Vec<crate::db::Bind>,
    /// For a `concat`, the properties each branch's rows carry, by branch
    /// (the key column numbers a row's branch); else empty.
    pub branches: Vec<Vec<String>>,
}

impl Derived {
    /// The rows of `text` with `binds`, not a `concat`'s.
    pub(crate) fn statement(text: String, binds: Vec<crate::db::Bind>) -> Derived {
        Derived {
            text,
            binds,
            branches: Vec::new(),
        }
    }
}

impl PartialEq for Derived {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.binds == other.binds
    }
}

impl Eq for Derived {}

impl EntitySet {
    /// The one access rule of every set: a public set is read by anyone,
    /// any other by a signed-in caller only, and a bearer token given some
    /// sets reads those only. Every read (a set, its navigations,
    /// `$expand`, `$filter` paths, the service document and `$metadata`)
    /// asks this.
    pub fn readable_by(&self, caller: &Caller) -> bool {
        (self.public || caller.user_id.is_some()) && caller.may_name(&self.name)
    }

    /// An empty, non-public set named `name` over `table`, keyed by the
    /// property named `key` (declare it with [`property`](Self::property)).
    ///
    /// ```
    /// use gatehouse::odata::{EdmType, EntitySet, Property};
    /// let pets = EntitySet::new("Pets", "pets", "id")
    ///     .property(Property::new("id", EdmType::Int32).not_null())
    ///     .public(true);
    /// assert_eq!(pets.key_property().unwrap().name, "id");
    /// ```
    pub fn new(name: &str, table: &str, key: &str) -> EntitySet {
        EntitySet {
            name: name.to_owned(),
            table: table.to_owned(),
            key: key.to_owned(),
            properties: Vec::new(),
            navigations: Vec::new(),
            searchable: Vec::new(),
            public: false,
            scope: None,
            hierarchy: None,
            derived: None,
        }
    }

    /// Declares the recursive hierarchy `qualifier` over the set, whose
    /// parent is the to-one navigation `parent` to the set itself.
    pub fn hierarchy(mut self, qualifier: &str, parent: &str) -> EntitySet {
        self.hierarchy = Some(Hierarchy {
            qualifier: qualifier.to_owned(),
            parent: parent.to_owned(),
            roots: Roots::default(),
        });
        self
    }

    /// Makes the roots of the set's hierarchy (declared before) the nodes
    /// `roots` names.
    pub fn hierarchy_roots(mut self, roots: Roots) -> EntitySet {
        if let Some(hierarchy) = &mut self.hierarchy {
            hierarchy.roots = roots;
        }
        self
    }

    /// What a statement reads the set's rows from: its table, quoted, or
    /// the parenthesised statement of a derived set.
    pub(crate) fn rows_sql(&self, dialect: crate::db::Dialect) -> String {
        match &self.derived {
            Some(derived) => format!("({})", derived.text),
            None => dialect.quote(&self.table),
        }
    }

    /// Adds a structural property.
    pub fn property(mut self, property: Property) -> EntitySet {
        self.properties.push(property);
        self
    }

    /// Adds a navigation property.
    pub fn navigation(mut self, navigation: Navigation) -> EntitySet {
        self.navigations.push(navigation);
        self
    }

    /// Names the properties `$search` looks in.
    pub fn searchable(mut self, names: &[&str]) -> EntitySet {
        self.searchable = names.iter().map(|n| (*n).to_owned()).collect();
        self
    }

    /// Lets guests read the set (or not).
    pub fn public(mut self, public: bool) -> EntitySet {
        self.public = public;
        self
    }

    /// Binds the set to a [`Scope`]: every query over it also applies the
    /// scope's filter for the caller.
    pub fn scoped(mut self, scope: Scope) -> EntitySet {
        self.scope = Some(scope);
        self
    }

    /// The structural property called `name`, if any.
    pub(crate) fn find_property(&self, name: &str) -> Option<&Property> {
        self.properties.iter().find(|p| p.name == name)
    }

    /// The navigation property called `name`, if any.
    pub(crate) fn find_navigation(&self, name: &str) -> Option<&Navigation> {
        self.navigations.iter().find(|n| n.name == name)
    }

    /// The key property; `None` only for a set declared inconsistently.
    pub fn key_property(&self) -> Option<&Property> {
        self.find_property(&self.key)
    }

    /// The searchable properties that exist, in declaration order of
    /// `searchable`.
    pub fn searchable_properties(&self) -> impl Iterator<Item = &Property> {
        self.searchable.iter().filter_map(|n| self.find_property(n))
    }
}

/// Every entity set the service exposes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Model {
    /// The sets, in service-document order.
    pub sets: Vec<EntitySet>,
}

impl Model {
    /// A model without sets.
    pub fn new() -> Model {
        Model::default()
    }

    /// Adds an entity set.
    pub fn set(mut self, set: EntitySet) -> Model {
        self.sets.push(set);
        self
    }

    /// The set called `name` (case-sensitive), if any.
    ///
    /// ```
    /// use gatehouse::odata::{EntitySet, Model};
    /// let m = Model::new().set(EntitySet::new("Pets", "pets", "id"));
    /// assert!(m.find("Pets").is_some() && m.find("pets").is_none());
    /// ```
    pub fn find(&self, name: &str) -> Option<&EntitySet> {
        self.sets.iter().find(|s| s.name == name)
    }

    /// The set a navigation leads to, if declared.
    pub fn target_of(&self, navigation: &Navigation) -> Option<&EntitySet> {
        self.find(&navigation.target_set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders_fill_every_field() {
        let set = EntitySet::new("Users", "users", "id")
            .property(Property::new("id", EdmType::Int64).not_null())
            .property(Property::new("name", EdmType::String).column("display_name"))
            .navigation(Navigation::to_one("org", "Orgs", "org_id"))
            .searchable(&["name", "missing"])
            .public(true);
        assert!(set.public);
        assert_eq!(set.key_property().map(|p| p.nullable), Some(false));
        assert_eq!(set.find_property("name").map(|p| p.nullable), Some(true));
        assert!(set.find_navigation("org").is_some());
        let names: Vec<_> = set.searchable_properties().map(|p| &p.name).collect();
        assert_eq!(names, ["name"]);
    }

    #[test]
    fn edm_types_know_their_family() {
        assert!(EdmType::Int16.is_integer() && EdmType::Decimal.is_numeric());
        assert!(!EdmType::Decimal.is_integer() && !EdmType::String.is_numeric());
        assert_eq!(EdmType::DateTimeOffset.name(), "Edm.DateTimeOffset");
    }
}
