//! The text of an HTML-only message: what a reader sees of it in a browser, as
//! plain text with its paragraphs kept. This is what a receipt stores, the
//! search indexes, an agent reads and the interface shows as the message's
//! plain text.
//!
//! It reads HTML just far enough for that, in one pass and without building a
//! tree: tags, comments, character references and the elements whose content
//! is never text (`script`, `style`, `title`, …). Blocks become line breaks and
//! paragraphs blank lines (`p`, `div`, `br`, `h1`–`h6`, `li`, `tr`,
//! `blockquote`, `hr`, …), list items get a bullet or their number, quoted
//! lines a `> `, table cells a tab between them; whitespace collapses as a
//! browser collapses it, what the document hides (its head, `hidden`,
//! `display:none`) is left out, and never more than one blank line follows
//! another. Outlook's own paragraphs (`class="MsoNormal"`, set without margins
//! by its stylesheet) are lines, as Outlook shows them.
//!
//! It never sanitises or serves HTML: the interface renders a message's HTML
//! itself, sandboxed (decision 0021). It reads no CSS beyond an element's own
//! `display:none`, and shows no image and no link target. Whatever the input,
//! it costs one pass over it, and stops once the text passes its limit.

mod references;
mod text;
mod tokens;

use text::Text;
use tokens::{Token, Tokens};

/// The text of `html`, stopping soon after it passes `limit` bytes (the caller
/// cuts it there and says so).
pub fn render(html: &str, limit: usize) -> String {
    let mut text = Text::new(limit);
    let mut tokens = Tokens::new(html);
    while !text.is_full()
        && let Some(token) = tokens.next()
    {
        match token {
            Token::Text(characters) => text.characters(characters),
            Token::Start(tag) => text.start(&tag),
            Token::End(name) => text.end(&name),
        }
    }
    text.finish()
}
