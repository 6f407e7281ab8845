//! Names and titles people type, and what they must not hold: the Unicode
//! controls that reorder text (bidirectional embeddings, overrides and
//! isolates). One of them makes a name read as something else: `Ana`, U+202E
//! RIGHT-TO-LEFT OVERRIDE, `lanif` reads `Anafinal`, and a file called
//! `invoice`, U+202E, `fdp.exe` reads `invoiceexe.pdf`. Every field a person
//! or an agent names something with (people, teams, mailboxes, agents,
//! butlers, labels, reminders, file names) is refused when it holds one, here,
//! in one set of words naming the field; text the node only
//! receives (a message's subject, its attachments' names) cannot be refused and
//! is neutralised where it is shown instead (the interface's `dom.js`, and
//! `http::Response::download` for file names).
//!
//! The marks (U+200E LEFT-TO-RIGHT MARK, U+200F RIGHT-TO-LEFT MARK, U+061C
//! ARABIC LETTER MARK) are allowed: each is an invisible letter of one
//! direction, which can move the punctuation beside it but cannot reverse a
//! run of letters, and right-to-left writers need them to place a number or a
//! full stop correctly.

use crate::core::refusal::Refusal;

/// The controls that embed, override or isolate a direction (U+202A–U+202E,
/// U+2066–U+2069), with the names Unicode gives them. The interface's
/// `dom.js` makes the same characters visible; a test holds the two lists
/// together.
pub const DIRECTION_CONTROLS: [(char, &str); 9] = [
    ('\u{202A}', "LEFT-TO-RIGHT EMBEDDING"),
    ('\u{202B}', "RIGHT-TO-LEFT EMBEDDING"),
    ('\u{202C}', "POP DIRECTIONAL FORMATTING"),
    ('\u{202D}', "LEFT-TO-RIGHT OVERRIDE"),
    ('\u{202E}', "RIGHT-TO-LEFT OVERRIDE"),
    ('\u{2066}', "LEFT-TO-RIGHT ISOLATE"),
    ('\u{2067}', "RIGHT-TO-LEFT ISOLATE"),
    ('\u{2068}', "FIRST STRONG ISOLATE"),
    ('\u{2069}', "POP DIRECTIONAL ISOLATE"),
];

/// Whether `character` is one of `DIRECTION_CONTROLS`.
pub fn is_direction_control(character: char) -> bool {
    matches!(character, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// The first direction control in `text`, if any.
pub fn first_direction_control(text: &str) -> Option<char> {
    text.chars().find(|character| is_direction_control(*character))
}

/// The refusal of `field` (a body's field, as `rules.effects[0].label`)
/// holding `control`: the four parts, the field and the character named.
pub fn direction_control_refused(field: &str, control: char) -> Refusal {
    let name =
        DIRECTION_CONTROLS.iter().find(|(known, _)| *known == control).map_or("a direction control", |(_, name)| name);
    Refusal::new(
        400,
        "direction_control",
        format!("`{field}` holds U+{:04X} {name}, which reorders the text after it.", u32::from(control)),
        "Names and titles are shown to people as they are, and a direction control (U+202A–U+202E, U+2066–U+2069) makes one read as something else, so none may hold one.",
        format!(
            "Send `{field}` without it. Right-to-left text needs none: its letters carry their direction, and the marks U+200E, U+200F and U+061C are allowed."
        ),
    )
}

/// Refuses `text`, sent as `field`, when it holds a direction control.
pub fn refuse_direction_controls(field: &str, text: &str) -> Result<(), Refusal> {
    match first_direction_control(text) {
        Some(control) => Err(direction_control_refused(field, control)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embeddings_overrides_and_isolates_are_refused_and_the_marks_are_not() {
        for (control, _) in DIRECTION_CONTROLS {
            assert!(is_direction_control(control));
            let refused = refuse_direction_controls("name", &format!("Ana{control}lanif")).unwrap_err();
            assert_eq!((refused.status, refused.code), (400, "direction_control"));
            assert!(refused.message.contains("`name`"), "{}", refused.message);
            assert!(refused.message.contains(&format!("U+{:04X}", u32::from(control))), "{}", refused.message);
        }
        // Exactly the nine: the neighbours, the marks and plain right-to-left text pass.
        let allowed = ['\u{2029}', '\u{202F}', '\u{2065}', '\u{206A}', '\u{200E}', '\u{200F}', '\u{061C}'];
        for character in allowed {
            assert!(!is_direction_control(character), "{character:?}");
        }
        assert!(refuse_direction_controls("name", "שלום 42\u{200F}.").is_ok());
        assert_eq!(
            (0..=0x10FFFF).filter_map(char::from_u32).filter(|c| is_direction_control(*c)).count(),
            DIRECTION_CONTROLS.len()
        );
    }
}
