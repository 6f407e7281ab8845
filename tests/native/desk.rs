//! A desk: a world, a mailbox in it, and the people who work it, each signed in
//! and holding the relations named for them there. The one way the native tests
//! build one (issue 28), step by step in the order written, so a file's desk
//! reads as the list of who holds what:
//!
//! ```ignore
//! Desk::new(SUPPORT).receiving("plain").with("ben@example.com", WORKS_THE_MAILBOX)
//! ```

use crate::support::World;

/// Reads a mailbox: its listing and its messages, metadata and content.
pub const READS_THE_MAILBOX: &[&str] = &["mailbox.metadata.read", "mailbox.content.read"];
/// Works a mailbox: reads it and drafts from it.
pub const WORKS_THE_MAILBOX: &[&str] = &["mailbox.metadata.read", "mailbox.content.read", "send.propose"];
/// Works a mailbox and decides on its sends too.
pub const WORKS_AND_DECIDES: &[&str] =
    &["mailbox.metadata.read", "mailbox.content.read", "send.propose", "approval.decide"];
/// Drafts from a mailbox seeing only its listing, never a message's content.
pub const DRAFTS_FROM_THE_LISTING: &[&str] = &["mailbox.metadata.read", "send.propose"];
/// Every relation a mailbox has.
pub const EVERY_MAILBOX_RELATION: &[&str] =
    &["mailbox.metadata.read", "mailbox.content.read", "message.export", "send.propose", "approval.decide"];

/// Someone at the desk, signed in.
pub struct Person {
    pub id: String,
    pub token: String,
}

/// A world, a mailbox in it, and the people who work it.
pub struct Desk {
    pub world: World,
    /// The desk's mailbox: its id.
    pub mailbox: String,
    /// The desk's mailbox: its address.
    address: String,
    /// Other mailboxes made with the desk: (address, id).
    others: Vec<(String, String)>,
    /// What the mailbox received while the desk was built, oldest first.
    receipts: Vec<String>,
    /// Who works here, by name (their address before the `@`).
    people: Vec<(String, Person)>,
}

impl Desk {
    /// A new world with a mailbox at `address`.
    pub fn new(address: &str) -> Desk {
        Desk::in_world(World::new(), address)
    }

    /// A mailbox at `address` in `world`, for a world set up its own way (its
    /// clock, its configuration).
    pub fn in_world(world: World, address: &str) -> Desk {
        let mailbox = world.mailbox(address);
        Desk {
            world,
            mailbox,
            address: address.to_string(),
            others: Vec::new(),
            receipts: Vec::new(),
            people: Vec::new(),
        }
    }

    /// Another mailbox at `address`; `mailbox_at` answers its id.
    pub fn and_mailbox(mut self, address: &str) -> Desk {
        let id = self.world.mailbox(address);
        self.others.push((address.to_string(), id));
        self
    }

    /// The desk's mailbox receives the fixture `name` (`tests/fixtures/mail/`);
    /// `receipt` answers the first such.
    pub fn receiving(mut self, name: &str) -> Desk {
        let receipt = self.world.deliver(name, &self.address);
        self.receipts.push(receipt);
        self
    }

    /// A person at `email`, signed in, holding `relations` on the desk's mailbox.
    pub fn with(self, email: &str, relations: &[&str]) -> Desk {
        let mailbox = self.mailbox.clone();
        self.with_on(email, relations, &mailbox)
    }

    /// A person at `email`, signed in, holding `relations` on `object` (`org`,
    /// another mailbox).
    pub fn with_on(mut self, email: &str, relations: &[&str], object: &str) -> Desk {
        let (id, token) = self.world.person(email);
        self.world.grant_all(&id, relations, object);
        let name = email.split('@').next().unwrap().to_string();
        assert!(self.people.iter().all(|(known, _)| *known != name), "{name} is at the desk already");
        self.people.push((name, Person { id, token }));
        self
    }

    /// The administrator holds `relations` on the desk's mailbox too.
    pub fn with_admin(self, relations: &[&str]) -> Desk {
        self.world.grant_all(&self.world.admin_id, relations, &self.mailbox);
        self
    }

    /// The person called `name` (their address before the `@`).
    #[track_caller]
    pub fn person(&self, name: &str) -> &Person {
        match self.people.iter().find(|(known, _)| known == name) {
            Some((_, person)) => person,
            None => {
                panic!("no {name} at the desk: {:?}", self.people.iter().map(|(known, _)| known).collect::<Vec<_>>())
            }
        }
    }

    /// The first message the desk's mailbox received while it was built.
    #[track_caller]
    pub fn receipt(&self) -> &str {
        self.receipts.first().expect("the desk was built receiving a message")
    }

    /// The id of the mailbox at `address`, made with `and_mailbox`.
    #[track_caller]
    pub fn mailbox_at(&self, address: &str) -> &str {
        let other = self.others.iter().find(|(known, _)| known == address);
        &other.unwrap_or_else(|| panic!("no mailbox {address} at the desk")).1
    }

    /// The path of the desk's mailbox's sends.
    pub fn sends(&self) -> String {
        format!("/api/mailboxes/{}/sends", self.mailbox)
    }
}
