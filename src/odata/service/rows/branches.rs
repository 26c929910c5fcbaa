//! Rows of a `$apply` with `concat`: each row carries only the properties
//! of the branch it came from (UI5 tells a grand total from a count and from
//! a group by which properties a row has), as its first column says.

use super::cells::{Cells, Column};
use super::values::Cell;
use crate::odata::plan::ctx::Numbers;
use crate::odata::plan::error::ODataError;
use crate::odata::Property;

/// Per branch, the columns its rows carry.
#[derive(Debug, Clone)]
pub struct Branches {
    shapes: Vec<Shape>,
}

/// The columns of one branch's rows: each column's index in the row and
/// how it is written; then what closes nested objects.
#[derive(Debug, Clone)]
struct Shape {
    columns: Vec<(usize, Column)>,
    suffix: Vec<u8>,
}

impl Branches {
    /// The shapes of rows whose columns are `properties`, branch `i`
    /// carrying those named in `branches[i]`.
    pub fn new(properties: &[&Property], branches: &[Vec<String>], numbers: Numbers) -> Branches {
        let shapes = branches
            .iter()
            .map(|names| {
                let (indices, carried): (Vec<usize>, Vec<&Property>) = properties
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| names.contains(&p.name))
                    .map(|(i, p)| (i, *p))
                    .unzip();
                let (columns, suffix) = Column::object(&carried, numbers);
                let columns = indices.into_iter().zip(columns).collect();
                Shape { columns, suffix }
            })
            .collect();
        Branches { shapes }
    }

    /// Writes the properties of `row`'s branch (named by its column
    /// `branch`) as an open JSON object onto `out`.
    pub fn write(
        &self,
        out: &mut Vec<u8>,
        row: &dyn Cells,
        branch: usize,
    ) -> Result<(), ODataError> {
        let index = match row.cell(branch)? {
            Cell::Int(n) => usize::try_from(n).ok(),
            Cell::Text(text) => text.parse().ok(),
            _ => None,
        };
        let Some(shape) = index.and_then(|i| self.shapes.get(i)) else {
            return Err(ODataError::internal(&"a concat row names no branch"));
        };
        if shape.columns.is_empty() {
            out.push(b'{');
        }
        for (i, column) in &shape.columns {
            column.write(out, |out| row.write(*i, column.edm, out))?;
        }
        out.extend_from_slice(&shape.suffix);
        Ok(())
    }
}
