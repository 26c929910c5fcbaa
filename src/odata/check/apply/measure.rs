//! One aggregated value of `aggregate(…)`, checked: the property and
//! method it reads, and its result type.

use super::{own_property, TARGET};
use crate::odata::check::resolve::QueryError;
use crate::odata::model::sets::{EdmType, EntitySet, Property};
use crate::odata::query::syntax::{Aggregate, AggregateExpr, Method};

/// One aggregated value, checked against the rows it reads.
pub(crate) struct Measure {
    /// The property it becomes in the grouped rows.
    pub(crate) alias: String,
    /// The property of the rows grouped it aggregates, and how; `None`
    /// for `$count`.
    pub(crate) of: Option<(Property, Method)>,
}

impl Measure {
    /// `aggregate`, checked against `set`'s properties: a property of its
    /// own, summed or averaged only when it is a number.
    pub(super) fn of(set: &EntitySet, aggregate: &Aggregate) -> Result<Measure, QueryError> {
        let of = match &aggregate.expr {
            AggregateExpr::Count => None,
            AggregateExpr::Method { path, method } => {
                let property = own_property(set, path, "aggregate")?;
                let numeric = property.edm_type.is_numeric();
                if matches!(method, Method::Sum | Method::Average) && !numeric {
                    let msg = format!(
                        "cannot {} '{}': it is {}, not a number",
                        method.name(),
                        property.name,
                        property.edm_type.name()
                    );
                    return Err(QueryError::new("type_mismatch", TARGET, msg));
                }
                Some((property.clone(), *method))
            }
        };
        Ok(Measure {
            alias: aggregate.alias.clone(),
            of,
        })
    }

    /// The result type (OData Data Aggregation 4.0, 3.1.3): `sum` of an
    /// integer a Decimal, of a Decimal or Double the same; `average` a
    /// Decimal of a Decimal, else a Double; `min` and `max` the input's;
    /// `countdistinct` and `$count` an Int64.
    fn edm_type(&self) -> EdmType {
        match &self.of {
            None => EdmType::Int64,
            Some((p, Method::Sum)) if p.edm_type.is_integer() => EdmType::Decimal,
            Some((p, Method::Sum)) => p.edm_type,
            Some((p, Method::Average)) if p.edm_type == EdmType::Decimal => EdmType::Decimal,
            Some((_, Method::Average)) => EdmType::Double,
            Some((p, Method::Min | Method::Max)) => p.edm_type,
            Some((_, Method::CountDistinct)) => EdmType::Int64,
        }
    }

    /// The property of the grouped rows that holds the value.
    pub(crate) fn property(&self) -> Property {
        let counts = matches!(self.of, None | Some((_, Method::CountDistinct)));
        Property {
            name: self.alias.clone(),
            column: self.alias.clone(),
            edm_type: self.edm_type(),
            nullable: !counts,
        }
    }
}
