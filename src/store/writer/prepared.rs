//! The writer's statements: prepared once per connection and kept next to
//! it, with their named parameters resolved to positions on first use.
//!
//! NB: `Connection::prepare_cached` finds a statement by hashing its whole SQL
//! text (twice: to take it out of the cache and to put it back), and binding by
//! name searches the statement's parameter names for each value. Per stored
//! Event that was about a fifth of the writer's time (docs/performance.md).
//! Here a statement is a field, and a parameter's position is remembered per
//! call site order, so a row costs only the binds and the step.

use rusqlite::types::ToSql;
use rusqlite::{Connection, Row, Rows, Statement};

/// One statement, prepared on first use.
pub(super) struct Lazy<'c> {
    sql: &'static str,
    prepared: Option<Prepared<'c>>,
}

impl<'c> Lazy<'c> {
    pub(super) const fn new(sql: &'static str) -> Lazy<'c> {
        Lazy {
            sql,
            prepared: None,
        }
    }

    /// The statement, prepared on `conn` the first time it is asked for.
    pub(super) fn on(&mut self, conn: &'c Connection) -> rusqlite::Result<&mut Prepared<'c>> {
        let prepared = match self.prepared.take() {
            Some(p) => p,
            None => Prepared::new(conn.prepare(self.sql)?),
        };
        Ok(self.prepared.insert(prepared))
    }
}

/// A prepared statement that binds named parameters by remembered position.
pub(super) struct Prepared<'c> {
    statement: Statement<'c>,
    parameters: usize,
    /// The parameter name given at each place of the last call, and its index.
    slots: Vec<(String, usize)>,
}

impl<'c> Prepared<'c> {
    fn new(statement: Statement<'c>) -> Prepared<'c> {
        Prepared {
            parameters: statement.parameter_count(),
            statement,
            slots: Vec::new(),
        }
    }

    /// Binds every parameter of the statement, by name (`named_params!`).
    fn bind(&mut self, params: &[(&str, &dyn ToSql)]) -> rusqlite::Result<()> {
        // NB: bindings outlive a step, so a parameter left out would silently
        // keep the previous row's value: every call must name them all.
        if params.len() != self.parameters {
            return Err(rusqlite::Error::InvalidParameterCount(
                params.len(),
                self.parameters,
            ));
        }
        for (place, (name, value)) in params.iter().enumerate() {
            let index = match self.slots.get(place) {
                Some((known, index)) if known == name => *index,
                _ => {
                    let index = self
                        .statement
                        .parameter_index(name)?
                        .ok_or_else(|| rusqlite::Error::InvalidParameterName(name.to_string()))?;
                    self.slots.truncate(place);
                    self.slots.push((name.to_string(), index));
                    index
                }
            };
            self.statement.raw_bind_parameter(index, value)?;
        }
        Ok(())
    }

    /// Runs a statement that returns no rows; the number of rows changed.
    pub(super) fn execute(&mut self, params: &[(&str, &dyn ToSql)]) -> rusqlite::Result<usize> {
        self.bind(params)?;
        self.statement.raw_execute()
    }

    /// Runs a statement whose parameters are all positional (`?`), one value
    /// for each, in order; the number of rows changed.
    pub(super) fn execute_positional(&mut self, values: &[&dyn ToSql]) -> rusqlite::Result<usize> {
        if values.len() != self.parameters {
            return Err(rusqlite::Error::InvalidParameterCount(
                values.len(),
                self.parameters,
            ));
        }
        for (i, value) in values.iter().enumerate() {
            self.statement.raw_bind_parameter(i + 1, value)?;
        }
        self.statement.raw_execute()
    }

    /// Runs a query; its rows.
    pub(super) fn query(&mut self, params: &[(&str, &dyn ToSql)]) -> rusqlite::Result<Rows<'_>> {
        self.bind(params)?;
        Ok(self.statement.raw_query())
    }

    /// Runs a query; its first row mapped by `f`, if it has one.
    pub(super) fn first<T>(
        &mut self,
        params: &[(&str, &dyn ToSql)],
        f: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<Option<T>> {
        self.query(params)?.next()?.map(f).transpose()
    }

    /// Runs a query; every row mapped by `f`.
    pub(super) fn all<T>(
        &mut self,
        params: &[(&str, &dyn ToSql)],
        mut f: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> rusqlite::Result<Vec<T>> {
        let mut rows = self.query(params)?;
        let mut all = Vec::new();
        while let Some(row) = rows.next()? {
            all.push(f(row)?);
        }
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::named_params;

    fn conn() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (a INTEGER, b TEXT)")
            .unwrap();
        conn
    }

    #[test]
    fn parameters_bind_by_name_whatever_their_order() {
        let conn = conn();
        let mut insert = Lazy::new("INSERT INTO t (a, b) VALUES (:a, :b)");
        let st = insert.on(&conn).unwrap();
        st.execute(named_params! {":a": 1, ":b": "one"}).unwrap();
        st.execute(named_params! {":b": "two", ":a": 2}).unwrap();
        st.execute(named_params! {":a": 3, ":b": "three"}).unwrap();
        let rows: Vec<(i64, String)> = conn
            .prepare("SELECT a, b FROM t ORDER BY a")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            rows,
            [(1, "one".into()), (2, "two".into()), (3, "three".into())]
        );
    }

    #[test]
    fn a_parameter_left_out_is_an_error_not_the_last_value() {
        let conn = conn();
        let mut insert = Lazy::new("INSERT INTO t (a, b) VALUES (:a, :b)");
        let st = insert.on(&conn).unwrap();
        st.execute(named_params! {":a": 1, ":b": "one"}).unwrap();
        assert!(matches!(
            st.execute(named_params! {":a": 2}),
            Err(rusqlite::Error::InvalidParameterCount(1, 2))
        ));
        assert!(matches!(
            st.execute(named_params! {":a": 2, ":c": 3}),
            Err(rusqlite::Error::InvalidParameterName(n)) if n == ":c"
        ));
    }

    #[test]
    fn a_query_reads_its_rows_and_can_run_again() {
        let conn = conn();
        conn.execute_batch("INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'x')")
            .unwrap();
        let mut find = Lazy::new("SELECT a FROM t WHERE b = :b ORDER BY a");
        for (b, want) in [("x", vec![1, 3]), ("y", vec![2]), ("x", vec![1, 3])] {
            let mut rows = find
                .on(&conn)
                .unwrap()
                .query(named_params! {":b": b})
                .unwrap();
            let mut got = Vec::new();
            while let Some(row) = rows.next().unwrap() {
                got.push(row.get::<_, i64>(0).unwrap());
            }
            assert_eq!(got, want);
        }
    }
}
