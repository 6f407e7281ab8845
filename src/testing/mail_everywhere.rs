//! Reading a node's mail wherever it is kept, for tests that look at storage
//! directly: D1 and every mailbox's own database that was created (decision
//! 0040). A test that checks what one store holds reads that store itself
//! (`TestNode::database`, `SqliteMailboxes::database`); one that only wants
//! the mail, whichever store a mailbox keeps it in, reads it here.

use std::rc::Rc;

use super::node::TestNode;
use super::sqlite::{SqliteDatabase, SqliteMailbox};

impl TestNode {
    /// Every store that can answer `sql` (D1 first, then each mailbox's own
    /// database in id order): those holding every table and column it names.
    fn mail_stores(&self, sql: &str) -> Vec<Store<'_>> {
        let mut stores = Vec::new();
        if self.database.compiles(sql) {
            stores.push(Store::D1(&self.database));
        }
        for mailbox_id in self.mailboxes.ids() {
            if let Some(mailbox) = self.mailboxes.database(&mailbox_id)
                && mailbox.database.compiles(sql)
            {
                stores.push(Store::Mailbox(mailbox));
            }
        }
        assert!(!stores.is_empty(), "no store can answer {sql}");
        stores
    }

    /// Every row `sql` answers in each store that can answer it, one store's
    /// after another's (an `ORDER BY` holds within each).
    pub fn mail_rows(&self, sql: &str) -> Vec<Vec<String>> {
        self.mail_stores(sql).iter().flat_map(|store| store.database().rows(sql)).collect()
    }

    /// The first column of the first row `sql` answers in any store, as text.
    pub fn mail_peek(&self, sql: &str) -> Option<String> {
        self.mail_rows(sql).into_iter().find_map(|row| row.into_iter().next().filter(|value| !value.is_empty()))
    }

    /// The sum of the single integer `sql` answers in each store: a count of
    /// mail wherever it is.
    pub fn mail_count(&self, sql: &str) -> i64 {
        self.mail_stores(sql).iter().map(|store| store.database().count(sql)).sum()
    }

    /// Runs `sql` as `SqliteDatabase::try_tamper` does, in every store that
    /// can: the first refusal any answered.
    pub fn mail_try_tamper(&self, sql: &str) -> Result<(), String> {
        self.mail_stores(sql).iter().try_for_each(|store| store.database().try_tamper(sql))
    }

    /// Runs `sql` as `SqliteDatabase::tamper` does, in every store that can.
    pub fn mail_tamper(&self, sql: &str) {
        for store in self.mail_stores(sql) {
            store.database().tamper(sql);
        }
    }
}

/// A store the helpers read: D1, or a mailbox's own database.
enum Store<'a> {
    D1(&'a SqliteDatabase),
    Mailbox(Rc<SqliteMailbox>),
}

impl Store<'_> {
    fn database(&self) -> &SqliteDatabase {
        match self {
            Store::D1(database) => database,
            Store::Mailbox(mailbox) => &mailbox.database,
        }
    }
}
