//! Agents elsewhere as the node names them: a card URL checked against the
//! outbound rule, the id derived from it, the domain it belongs to, and
//! whether an agent's outbound policy reaches it.

use mailroom_contract::api::{MAXIMUM_REMOTE_RECIPIENTS, REMOTE_URL_MAXIMUM};

use super::errors::PeersError;
use crate::core::ids::{IdKind, derived_id};
use crate::core::outbound::{Destination, Host, OutboundPolicy};

/// An agent elsewhere, named by its card.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteAddress {
    /// Its id here: derived from the card URL, so every writer names it alike.
    pub id: String,
    pub card_url: String,
    /// Its card's host: the organisation it belongs to.
    pub domain: String,
}

impl RemoteAddress {
    /// The agent whose card is at `url`, when the outbound rule lets the node
    /// read it now; `field` names where the URL was given, for the refusal.
    pub fn of(url: &str, field: &str, policy: &OutboundPolicy) -> Result<RemoteAddress, PeersError> {
        let card_url = url.trim().to_string();
        let destination = Destination::check(&card_url, REMOTE_URL_MAXIMUM, policy)
            .map_err(|refused| PeersError::InvalidCardUrl { field: field.to_string(), why: refused.why() })?;
        let domain = destination.host().text();
        Ok(RemoteAddress { id: remote_agent_id(&card_url), card_url, domain })
    }
}

/// The id of the agent elsewhere whose card is at `card_url`.
pub fn remote_agent_id(card_url: &str) -> String {
    derived_id(IdKind::RemoteAgent, card_url.as_bytes())
}

/// Whether `domain` is one a peer may be named by: a host name (letters,
/// digits, hyphens, dots) or an address, lowercased.
pub fn is_domain(domain: &str) -> bool {
    !domain.is_empty()
        && domain.len() <= 253
        && !domain.starts_with(['.', '-'])
        && !domain.ends_with(['.', '-'])
        && domain.chars().all(|character| {
            character.is_ascii_lowercase() || character.is_ascii_digit() || matches!(character, '.' | '-' | ':')
        })
}

/// Whether an outbound policy's `entries` reach the agent at `address`: an
/// entry naming its card exactly, or its domain or a domain it is under.
pub fn reaches(entries: &[String], address: &RemoteAddress) -> bool {
    entries.iter().any(|entry| {
        entry == &address.card_url || Host::of_url(&address.card_url).is_some_and(|host| host.is_within(entry))
    })
}

/// An outbound policy's entries, checked and lowercased where they are
/// domains: at most `MAXIMUM_REMOTE_RECIPIENTS`, each a domain or a card's
/// https URL, without repeats.
pub fn valid_remote_recipients(entries: &[String]) -> Result<Vec<String>, PeersError> {
    if entries.len() > MAXIMUM_REMOTE_RECIPIENTS {
        return Err(PeersError::TooManyRemoteRecipients { given: entries.len() });
    }
    let mut valid: Vec<String> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let entry = entry.trim();
        let refused = || PeersError::InvalidRemoteRecipient { index, entry: entry.to_string() };
        let kept = if entry.starts_with("https://") || entry.starts_with("http://") {
            // The address is judged when a message goes; here only its shape.
            if entry.len() > REMOTE_URL_MAXIMUM || entry.contains(char::is_whitespace) {
                return Err(refused());
            }
            entry.to_string()
        } else {
            let domain = entry.to_ascii_lowercase();
            if !is_domain(&domain) {
                return Err(refused());
            }
            domain
        };
        if !valid.contains(&kept) {
            valid.push(kept);
        }
    }
    Ok(valid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(card_url: &str) -> RemoteAddress {
        RemoteAddress::of(card_url, "recipient", &OutboundPolicy::deployed()).unwrap()
    }

    #[test]
    fn a_domain_reaches_its_own_cards_and_its_subdomains_but_not_a_lookalike() {
        let card = address("https://agents.example.org/a2a/agt_1/.well-known/agent-card.json");
        assert_eq!(card.domain, "agents.example.org");
        assert!(reaches(&["example.org".into()], &card));
        assert!(reaches(&["agents.example.org".into()], &card));
        assert!(reaches(std::slice::from_ref(&card.card_url), &card));
        assert!(!reaches(&["ample.org".into()], &card), "a suffix that is not a whole label");
        assert!(!reaches(&["xample.org".into(), "org.example".into()], &card));
        assert!(!reaches(&[], &card), "nothing is reached by default");
        let other_card = address("https://agents.example.org/a2a/agt_2/.well-known/agent-card.json");
        assert!(!reaches(std::slice::from_ref(&card.card_url), &other_card), "a card names only itself");
    }

    #[test]
    fn the_same_card_is_always_the_same_agent_and_another_card_another() {
        let one = address("https://a.example/card.json");
        assert_eq!(one.id, remote_agent_id("https://a.example/card.json"));
        assert!(crate::core::ids::is_id_of(&one.id, IdKind::RemoteAgent), "{}", one.id);
        assert_ne!(one.id, address("https://a.example/card2.json").id);
    }

    #[test]
    fn a_card_inside_a_network_is_refused_naming_the_field() {
        for url in ["https://10.0.0.1/card.json", "http://example.org/card.json", "https://localhost/card.json"] {
            let refused = RemoteAddress::of(url, "recipient", &OutboundPolicy::deployed());
            assert!(
                matches!(refused, Err(PeersError::InvalidCardUrl { ref field, .. }) if field == "recipient"),
                "{url}"
            );
        }
    }

    #[test]
    fn policy_entries_are_domains_or_card_urls() {
        let kept = valid_remote_recipients(&[
            "Example.ORG".into(),
            "https://a.example/card.json".into(),
            "example.org".into(),
        ])
        .unwrap();
        assert_eq!(kept, vec!["example.org".to_string(), "https://a.example/card.json".to_string()]);
        for bad in ["", "exa mple.org", "-example.org", "*.example.org", "https://a b"] {
            assert!(valid_remote_recipients(&[bad.into()]).is_err(), "{bad:?}");
        }
        let many: Vec<String> = (0..=MAXIMUM_REMOTE_RECIPIENTS).map(|n| format!("d{n}.example")).collect();
        assert!(matches!(valid_remote_recipients(&many), Err(PeersError::TooManyRemoteRecipients { .. })));
    }
}
