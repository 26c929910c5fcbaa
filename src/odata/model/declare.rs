//! Entity sets declared in configuration (`odata.sets.<Name>`): a table whose
//! columns and types are read from the database schema, with the exposure
//! rules of the configuration applied.

mod columns;

use crate::odata::query::syntax::is_identifier;
use std::collections::BTreeMap;

use self::columns::{edm_type_names, mapped_type, named_type};
use crate::db::{table_columns, Column};

use crate::config::{ConfigError, HierarchyConfig, NavigationConfig, SetConfig};
use crate::db::{Db, Dialect};
use crate::odata::model::sets::{EdmType, EntitySet, Hierarchy, Navigation, Property};

/// Builds the entity sets declared in configuration, reading each table's
/// columns from the schema.
///
/// Every column not in `exclude` becomes a property of the same name, typed
/// from its SQL type (or from `types`) and non-nullable when the schema says
/// so; the key always is. Navigation targets are not looked up here: the
/// caller checks the combined model.
///
/// ```no_run
/// # async fn demo(db: &gatehouse::db::Db, settings: &gatehouse::Settings) {
/// let sets = gatehouse::odata::declared_sets(db, &settings.odata.sets).await;
/// # }
/// ```
pub async fn declared_sets(
    db: &Db,
    sets: &BTreeMap<String, SetConfig>,
) -> Result<Vec<EntitySet>, ConfigError> {
    let mut declared = Vec::with_capacity(sets.len());
    for (name, config) in sets {
        declared.push(declared_set(db, name, config).await?);
    }
    Ok(declared)
}

async fn declared_set(db: &Db, name: &str, config: &SetConfig) -> Result<EntitySet, ConfigError> {
    let key = format!("odata.sets.{name}");
    if !is_identifier(name) {
        return Err(ConfigError::new(&key, NOT_AN_IDENTIFIER));
    }
    let table_key = format!("{key}.table");
    let table = &config.table;
    let columns = table_columns(db, table).await.map_err(|e| {
        ConfigError::new(
            &table_key,
            format!("cannot read the columns of `{table}`: {e}"),
        )
    })?;
    if columns.is_empty() {
        return Err(ConfigError::new(
            &table_key,
            format!("no table `{table}` in the database"),
        ));
    }
    let declaration = Declaration {
        name,
        config,
        columns,
        dialect: db.dialect(),
    };
    declaration.entity_set()
}

const NOT_AN_IDENTIFIER: &str =
    "is not an OData identifier (letters, digits and `_`, starting with a letter or `_`)";

/// One configured set together with its table's columns, checked piece by
/// piece into an [`EntitySet`].
struct Declaration<'a> {
    name: &'a str,
    config: &'a SetConfig,
    columns: Vec<Column>,
    dialect: Dialect,
}

impl Declaration<'_> {
    /// Checks every name the configuration mentions, then builds the set.
    fn entity_set(&self) -> Result<EntitySet, ConfigError> {
        for name in &self.config.exclude {
            self.column(name, ".exclude")?;
        }
        self.exposed(&self.config.key, ".key")?;
        for name in self.config.types.keys() {
            self.exposed(name, &format!(".types.{name}"))?;
        }
        let mut set = EntitySet::new(self.name, &self.config.table, &self.config.key)
            .public(self.config.public);
        for column in self.columns.iter().filter(|c| !self.is_excluded(&c.name)) {
            set = set.property(self.property(column)?);
        }
        for (name, navigation) in &self.config.navigation {
            set = set.navigation(self.navigation(name, navigation)?);
        }
        if let Some(hierarchy) = &self.config.hierarchy {
            set = self.hierarchy(set, hierarchy)?;
        }
        let searchable = self.searchable(&set)?;
        Ok(set.searchable(&searchable))
    }

    /// `set` with its recursive hierarchy: the parent must be a to-one
    /// navigation of the set to itself, the qualifier an identifier, and
    /// no property may carry a computed property's name.
    fn hierarchy(
        &self,
        set: EntitySet,
        config: &HierarchyConfig,
    ) -> Result<EntitySet, ConfigError> {
        if !is_identifier(&config.qualifier) {
            return Err(self.error(".hierarchy.qualifier", NOT_AN_IDENTIFIER));
        }
        let parent = set.navigations.iter().find(|n| n.name == config.parent);
        let to_itself = parent.is_some_and(|n| n.target_set == self.name && !n.is_collection());
        if !to_itself {
            let reason = format!(
                "`{}` is not a to-one navigation of {} to itself",
                config.parent, self.name
            );
            return Err(self.error(".hierarchy.parent", reason));
        }
        if let Some((name, _)) = Hierarchy::COMPUTED
            .iter()
            .find(|(name, _)| set.properties.iter().any(|p| p.name == *name))
        {
            let reason = format!("column `{name}` has the name of a computed property; exclude it");
            return Err(self.error(".hierarchy", reason));
        }
        Ok(set
            .hierarchy(&config.qualifier, &config.parent)
            .hierarchy_roots(config.roots))
    }

    /// An error on `odata.sets.<Name><suffix>`.
    fn error(&self, suffix: &str, reason: impl Into<String>) -> ConfigError {
        ConfigError::new(&format!("odata.sets.{}{suffix}", self.name), reason)
    }

    fn is_excluded(&self, column: &str) -> bool {
        self.config.exclude.iter().any(|c| c == column)
    }

    /// The column called `name`; an error on `<key><suffix>` when the table
    /// has none.
    fn column(&self, name: &str, suffix: &str) -> Result<&Column, ConfigError> {
        let table = &self.config.table;
        self.columns
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| self.error(suffix, format!("table `{table}` has no column `{name}`")))
    }

    /// Like [`column`](Self::column), and the column must not be excluded.
    fn exposed(&self, name: &str, suffix: &str) -> Result<&Column, ConfigError> {
        let column = self.column(name, suffix)?;
        if self.is_excluded(name) {
            return Err(self.error(suffix, format!("column `{name}` is excluded")));
        }
        Ok(column)
    }

    /// The property exposing `column`: same name, type from `types` or the
    /// schema, not-null when the schema or the key role says so.
    fn property(&self, column: &Column) -> Result<Property, ConfigError> {
        let name = &column.name;
        if !is_identifier(name) {
            let reason = format!("column `{name}` {NOT_AN_IDENTIFIER}; exclude it");
            return Err(self.error(".exclude", reason));
        }
        let edm_type = match self.config.types.get(name) {
            Some(type_name) => named_type(type_name).ok_or_else(|| {
                let reason = format!("unknown type `{type_name}` (use {})", edm_type_names());
                self.error(&format!(".types.{name}"), reason)
            })?,
            None => mapped_type(self.dialect, &column.declared_type),
        };
        let property = Property::new(name, edm_type);
        Ok(if column.not_null || *name == self.config.key {
            property.not_null()
        } else {
            property
        })
    }

    /// The navigation `name`: to-one through a column of this table (which
    /// may be excluded), or to-many through a column of the target's table.
    fn navigation(&self, name: &str, config: &NavigationConfig) -> Result<Navigation, ConfigError> {
        let suffix = format!(".navigation.{name}");
        if !is_identifier(name) {
            return Err(self.error(&suffix, NOT_AN_IDENTIFIER));
        }
        if self
            .columns
            .iter()
            .any(|c| c.name == name && !self.is_excluded(name))
        {
            return Err(self.error(&suffix, format!("a column is called `{name}` too")));
        }
        let target = &config.target;
        match (&config.column, &config.remote_column) {
            (Some(column), None) => {
                self.column(column, &suffix)?;
                Ok(Navigation::to_one(name, target, column))
            }
            (None, Some(remote)) => Ok(Navigation::to_many(name, target, remote)),
            (Some(_), Some(_)) => Err(self.error(&suffix, "has both `column` and `remote_column`")),
            (None, None) => Err(self.error(
                &suffix,
                "needs `column` (to-one) or `remote_column` (to-many)",
            )),
        }
    }

    /// The `searchable` names, each an exposed string property of `set`.
    fn searchable<'s>(&'s self, set: &EntitySet) -> Result<Vec<&'s str>, ConfigError> {
        let mut names = Vec::with_capacity(self.config.searchable.len());
        for name in &self.config.searchable {
            self.exposed(name, ".searchable")?;
            let edm_type = set.find_property(name).map(|p| p.edm_type);
            if edm_type != Some(EdmType::String) {
                let reason = format!("column `{name}` is not a string");
                return Err(self.error(".searchable", reason));
            }
            names.push(name.as_str());
        }
        Ok(names)
    }
}
