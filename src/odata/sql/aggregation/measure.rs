//! One aggregated value of `aggregate(…)` as SQL.

use crate::odata::check::apply::Measure;
use crate::odata::model::sets::EdmType;
use crate::odata::query::syntax::Method;
use crate::odata::sql::expr::Writer;

/// `measure` over the rows aliased `alias`.
pub(super) fn measure_sql(w: &Writer<'_>, alias: &str, measure: &Measure) -> String {
    match &measure.of {
        None => "COUNT(*)".to_owned(),
        Some((p, method)) => {
            let value = w.property(alias, p);
            match method {
                Method::Sum => format!("SUM({value})"),
                Method::Min => format!("MIN({value})"),
                Method::Max => format!("MAX({value})"),
                // A double's average, not the engine's decimal of some
                // digits (MariaDB keeps four).
                Method::Average if p.edm_type != EdmType::Decimal => {
                    format!("AVG({value} * 1.0e0)")
                }
                Method::Average => format!("AVG({value})"),
                Method::CountDistinct => format!("COUNT(DISTINCT {value})"),
            }
        }
    }
}
