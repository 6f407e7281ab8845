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

use std::collections::HashMap;

use mail_parser::decoders::html::add_html_token;

/// The text of `html`, stopping soon after it passes `limit` bytes (the caller
/// cuts it there and says so).
pub fn render(html: &str, limit: usize) -> String {
    let mut text = Text::new(limit);
    let mut tokens = Tokens { html, at: 0 };
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

/// How deeply elements are followed. Browsers stop nesting at 512; beyond
/// this an element is shown inline, so nothing the input does can make the
/// stack grow without bound.
const MOST_OPEN_ELEMENTS: usize = 512;

/// Elements that never have content or an end tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param", "source", "track",
    "wbr",
];

/// Elements whose content is not markup, and is never shown as text: read up
/// to their end tag and dropped whole.
const RAW_TEXT: &[&str] = &["script", "style", "title", "textarea", "xmp", "iframe", "noembed", "noframes"];

/// Elements a document's head holds; any other starts its body.
const HEAD_CONTENT: &[&str] = &["meta", "link", "title", "style", "script", "base", "noscript", "template", "xml"];

/// Elements shown as blocks of their own: a line break before and after.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "body",
    "caption",
    "center",
    "dd",
    "details",
    "dialog",
    "div",
    "dt",
    "fieldset",
    "figcaption",
    "footer",
    "form",
    "header",
    "hgroup",
    "legend",
    "main",
    "nav",
    "option",
    "section",
    "summary",
];

/// Elements shown as blocks with a margin: a blank line before and after.
const SPACED_BLOCKS: &[&str] = &["dl", "figure", "h1", "h2", "h3", "h4", "h5", "h6"];

/// What separates a horizontal rule's paragraphs.
const RULE: &str = "—————";

/// Characters that show nothing, which newsletters pad their preview text
/// with: soft hyphen, combining grapheme joiner, zero-width space, word joiner
/// and byte order mark. (Zero-width joiners stay: emoji and scripts need them.)
fn is_invisible(character: char) -> bool {
    matches!(character, '\u{ad}' | '\u{34f}' | '\u{200b}' | '\u{2060}' | '\u{feff}')
}

/// A piece of HTML.
#[derive(Debug, PartialEq)]
enum Token<'a> {
    /// Text between tags, its character references not yet decoded.
    Text(&'a str),
    Start(Tag<'a>),
    /// An end tag's name, in lower case.
    End(String),
}

#[derive(Debug, PartialEq)]
struct Tag<'a> {
    /// In lower case.
    name: String,
    /// Names in lower case, values as written.
    attributes: Vec<(String, &'a str)>,
    self_closing: bool,
}

impl Tag<'_> {
    fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.iter().find(|(attribute, _)| attribute == name).map(|(_, value)| *value)
    }

    /// Whether the element hides what it holds: `hidden`, or `display:none` in its own style.
    fn hides(&self) -> bool {
        self.attribute("hidden").is_some()
            || self.attribute("style").is_some_and(|style| {
                let style: String = style.chars().filter(|c| !c.is_ascii_whitespace()).collect();
                style.to_ascii_lowercase().contains("display:none")
            })
    }

    /// Whether it is one of Outlook's paragraphs, which its stylesheet sets without margins.
    fn is_outlook_paragraph(&self) -> bool {
        self.attribute("class")
            .is_some_and(|classes| classes.split_ascii_whitespace().any(|class| class.starts_with("Mso")))
    }
}

/// The HTML tokenizer's states, as far as text needs them: where the next
/// token starts. Every index it slices at is that of an ASCII byte (`<`, `>`,
/// whitespace, a quote), so always a character boundary.
struct Tokens<'a> {
    html: &'a str,
    at: usize,
}

impl<'a> Tokens<'a> {
    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let rest = &self.html[self.at..];
            let bytes = rest.as_bytes();
            if bytes.is_empty() {
                return None;
            }
            if bytes[0] != b'<' {
                let end = rest.find('<').unwrap_or(rest.len());
                self.at += end;
                return Some(Token::Text(&rest[..end]));
            }
            match bytes.get(1) {
                Some(b'!') if rest.starts_with("<!--") => {
                    // `<!-->` and `<!--->` end where they start, as in a browser.
                    self.at += rest[2..].find("-->").map_or(rest.len(), |end| 2 + end + 3);
                }
                // `<!DOCTYPE …>`, `<![if …]>` (Outlook's), `<?xml …>`: bogus comments.
                Some(b'!' | b'?') => self.skip_past_closing_bracket(),
                Some(b'/') if bytes.get(2).is_some_and(u8::is_ascii_alphabetic) => {
                    let (name, _) = tag_name(&rest[2..]);
                    let (_, length, _) = attributes(&rest[2 + name.len()..]);
                    let Some(length) = length else {
                        self.at = self.html.len();
                        return None;
                    };
                    self.at += 2 + name.len() + length;
                    return Some(Token::End(name.to_ascii_lowercase()));
                }
                Some(b'/') => self.skip_past_closing_bracket(),
                Some(first) if first.is_ascii_alphabetic() => {
                    let (name, _) = tag_name(&rest[1..]);
                    let (attributes, length, self_closing) = attributes(&rest[1 + name.len()..]);
                    // A tag the input ends inside is no tag, as in a browser.
                    let Some(length) = length else {
                        self.at = self.html.len();
                        return None;
                    };
                    self.at += 1 + name.len() + length;
                    let name = name.to_ascii_lowercase();
                    if RAW_TEXT.contains(&name.as_str()) && !self_closing {
                        self.skip_raw_text(&name);
                        continue;
                    }
                    return Some(Token::Start(Tag { name, attributes, self_closing }));
                }
                _ => {
                    self.at += 1;
                    return Some(Token::Text("<"));
                }
            }
        }
    }

    fn skip_past_closing_bracket(&mut self) {
        let rest = &self.html[self.at..];
        self.at += rest.find('>').map_or(rest.len(), |end| end + 1);
    }

    /// Skips a raw-text element's content and its end tag: `</name` followed by
    /// whitespace, `/` or `>`, in any case.
    fn skip_raw_text(&mut self, name: &str) {
        let rest = &self.html[self.at..];
        let mut from = 0;
        while let Some(found) = rest[from..].find("</") {
            let start = from + found + 2;
            let candidate = rest.as_bytes().get(start..start + name.len());
            let after = rest.as_bytes().get(start + name.len());
            if candidate.is_some_and(|candidate| candidate.eq_ignore_ascii_case(name.as_bytes()))
                && after.is_none_or(|byte| byte.is_ascii_whitespace() || *byte == b'/' || *byte == b'>')
            {
                self.at += start;
                self.skip_past_closing_bracket();
                return;
            }
            from = start;
        }
        self.at = self.html.len();
    }
}

/// A tag's name at the start of `rest`: up to whitespace, `/` or `>`.
fn tag_name(rest: &str) -> (&str, usize) {
    let end = rest.find(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>').unwrap_or(rest.len());
    (&rest[..end], end)
}

/// A tag's attributes, from just after its name: each name and value, how far
/// the tag goes (past its `>`; `None` when the input ends first) and whether it
/// closes itself (`/>`). A quoted value may hold `>`.
fn attributes(rest: &str) -> (Vec<(String, &str)>, Option<usize>, bool) {
    let bytes = rest.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    let mut self_closing = false;
    loop {
        while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b'/') {
            self_closing = bytes[at] == b'/';
            at += 1;
        }
        match bytes.get(at) {
            None => return (found, None, false),
            Some(b'>') => return (found, Some(at + 1), self_closing),
            Some(_) => self_closing = false,
        }
        let name_start = at;
        // A name may begin with `=`; it ends at whitespace, `/`, `>` or the next `=`.
        at += 1;
        while at < bytes.len() && !matches!(bytes[at], b'=' | b'>' | b'/') && !bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        let name = rest[name_start..at].to_ascii_lowercase();
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        if bytes.get(at) != Some(&b'=') {
            found.push((name, ""));
            continue;
        }
        at += 1;
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        let value = match bytes.get(at) {
            Some(quote @ (b'"' | b'\'')) => {
                let start = at + 1;
                let Some(length) = rest[start..].find(*quote as char) else {
                    return (found, None, false);
                };
                at = start + length + 1;
                &rest[start..start + length]
            }
            _ => {
                let start = at;
                while at < bytes.len() && bytes[at] != b'>' && !bytes[at].is_ascii_whitespace() {
                    at += 1;
                }
                &rest[start..at]
            }
        };
        found.push((name, value));
    }
}

/// The character a numeric character reference stands for, as a browser reads
/// it: Windows-1252's for 0x80–0x9F (what such mail meant), U+FFFD for
/// nothing, a surrogate or beyond Unicode.
fn numeric_reference(code: u32) -> char {
    const WINDOWS_1252: [u32; 32] = [
        0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d,
        0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d,
        0x17e, 0x178,
    ];
    let code = match code {
        0x80..=0x9f => WINDOWS_1252[(code - 0x80) as usize],
        other => other,
    };
    match code {
        0 => char::REPLACEMENT_CHARACTER,
        code => char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER),
    }
}

/// Named references a browser reads without their `;` in text, of those mail uses.
const LEGACY_WITHOUT_SEMICOLON: &[&str] = &["amp", "lt", "gt", "quot", "nbsp", "copy", "reg"];

/// The characters of `text` with its character references decoded, each
/// handed to `each`.
fn decode(text: &str, mut each: impl FnMut(char)) {
    let mut rest = text;
    while let Some(ampersand) = rest.find('&') {
        rest[..ampersand].chars().for_each(&mut each);
        rest = &rest[ampersand..];
        let consumed = reference(rest, &mut each);
        if consumed == 0 {
            each('&');
            rest = &rest[1..];
        } else {
            rest = &rest[consumed..];
        }
    }
    rest.chars().for_each(each);
}

/// Decodes the character reference `text` starts with (at its `&`), handing
/// its characters to `each`; how many bytes it took, 0 when it is none.
fn reference(text: &str, each: &mut impl FnMut(char)) -> usize {
    let bytes = text.as_bytes();
    if bytes.get(1) == Some(&b'#') {
        let hexadecimal = matches!(bytes.get(2), Some(b'x' | b'X'));
        let digits_start = if hexadecimal { 3 } else { 2 };
        let digits = bytes[digits_start..]
            .iter()
            .take_while(|byte| if hexadecimal { byte.is_ascii_hexdigit() } else { byte.is_ascii_digit() })
            .count();
        if digits == 0 {
            return 0;
        }
        let number = &text[digits_start..digits_start + digits];
        let code = u32::from_str_radix(number, if hexadecimal { 16 } else { 10 }).unwrap_or(u32::MAX);
        each(numeric_reference(code));
        let end = digits_start + digits;
        return if bytes.get(end) == Some(&b';') { end + 1 } else { end };
    }
    let name_length = bytes[1..].iter().take(32).take_while(|byte| byte.is_ascii_alphanumeric()).count();
    if name_length == 0 {
        return 0;
    }
    let name = &text[1..1 + name_length];
    if bytes.get(1 + name_length) == Some(&b';') {
        let written = &text[..name_length + 2];
        let mut decoded = String::new();
        add_html_token(&mut decoded, written.as_bytes(), false);
        // mail-parser hands an unknown name back as written: that is text.
        if decoded == written {
            return 0;
        }
        decoded.chars().for_each(each);
        return name_length + 2;
    }
    if LEGACY_WITHOUT_SEMICOLON.contains(&name) {
        let mut decoded = String::new();
        add_html_token(&mut decoded, format!("&{name};").as_bytes(), false);
        decoded.chars().for_each(each);
        return name_length + 1;
    }
    0
}

/// What an open element did when it started, so its end undoes exactly that.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    /// Nothing: shown inline, or inside something hidden.
    Inline,
    /// Hides what it holds: a head, a template, `hidden`, `display:none`.
    Hides,
    /// A block: this many line breaks before and after.
    Block(usize),
    Quote,
    List,
    Item,
    /// A table cell: a tab from the cell before it in its row.
    Cell,
    Table,
    Row,
    Preformatted,
}

struct Open {
    name: String,
    role: Role,
}

/// What separates the next text from the last on the same line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Gap {
    None,
    Space,
    Tab,
}

struct List {
    ordered: bool,
    next_number: i64,
}

/// The text being written, and what the elements open around it ask of it.
struct Text {
    out: String,
    limit: usize,
    open: Vec<Open>,
    open_by_name: HashMap<String, usize>,
    /// How many open elements hide what they hold.
    hidden: usize,
    quote_depth: usize,
    preformatted: usize,
    lists: Vec<List>,
    /// For each open table, how many cells its current row has had.
    rows: Vec<usize>,
    /// Line breaks owed before the next text: the most any block boundary asked
    /// for, plus one for each `<br>`.
    breaks: usize,
    /// The shallowest quote since breaks were owed: blank lines carry its mark.
    breaks_quote_depth: usize,
    gap: Gap,
    /// The list item marker the next text starts its line with.
    marker: Option<String>,
    /// Whether the next text starts a line (its quote marks and marker first).
    at_line_start: bool,
    /// Where the current line starts in `out`.
    line_start: usize,
    /// Where its text starts, after its quote marks and list marker.
    line_prefix_end: usize,
    /// Whether the current line has shown anything but whitespace.
    line_has_content: bool,
    /// How many blank lines end `out` before the current line.
    blank_lines: usize,
    /// Whether a newline straight after `<pre>` is still to be dropped.
    pre_newline: bool,
}

impl Text {
    fn new(limit: usize) -> Text {
        Text {
            out: String::new(),
            limit,
            open: Vec::new(),
            open_by_name: HashMap::new(),
            hidden: 0,
            quote_depth: 0,
            preformatted: 0,
            lists: Vec::new(),
            rows: Vec::new(),
            breaks: 0,
            breaks_quote_depth: 0,
            gap: Gap::None,
            marker: None,
            at_line_start: true,
            line_start: 0,
            line_prefix_end: 0,
            line_has_content: false,
            blank_lines: 0,
            pre_newline: false,
        }
    }

    fn is_full(&self) -> bool {
        self.out.len() > self.limit
    }

    fn characters(&mut self, text: &str) {
        if self.hidden > 0 {
            return;
        }
        decode(text, |character| self.character(character));
    }

    fn character(&mut self, character: char) {
        let pre_newline = std::mem::take(&mut self.pre_newline);
        if self.preformatted > 0 {
            match character {
                '\n' if pre_newline => {}
                '\n' => self.line_break(),
                '\r' => {}
                ' ' | '\t' => self.write(character, false),
                _ => self.visible(character),
            }
        } else if matches!(character, ' ' | '\t' | '\n' | '\r' | '\x0c') {
            self.gap = self.gap.max(Gap::Space);
        } else {
            self.visible(character);
        }
    }

    fn visible(&mut self, character: char) {
        match character {
            // A no-break space holds its place: a paragraph of one is an empty line.
            '\u{a0}' => self.write(' ', false),
            _ if is_invisible(character) || character.is_control() => {}
            _ => self.write(character, true),
        }
    }

    /// Asks for at least `count` line breaks before the next text.
    fn block_boundary(&mut self, count: usize) {
        if self.breaks == 0 {
            self.breaks_quote_depth = self.quote_depth;
        }
        self.breaks = self.breaks.max(count);
    }

    /// Asks for one more line break before the next text: a `<br>`, or a newline
    /// in preformatted text.
    fn line_break(&mut self) {
        if self.breaks == 0 {
            self.breaks_quote_depth = self.quote_depth;
        }
        self.breaks += 1;
    }

    fn set_quote_depth(&mut self, depth: usize) {
        self.quote_depth = depth;
        self.breaks_quote_depth = self.breaks_quote_depth.min(depth);
    }

    fn quote_marks(depth: usize) -> String {
        "> ".repeat(depth)
    }

    fn write(&mut self, character: char, shows: bool) {
        if self.is_full() {
            return;
        }
        if self.breaks > 0 && !self.out.is_empty() {
            self.end_line();
            // Blank lines owed, never more than one in a row.
            for _ in 1..self.breaks {
                if self.blank_lines >= 1 {
                    break;
                }
                self.out.push_str(Self::quote_marks(self.breaks_quote_depth).trim_end());
                self.out.push('\n');
                self.blank_lines += 1;
            }
            self.line_start = self.out.len();
            self.line_has_content = false;
            self.at_line_start = true;
        }
        self.breaks = 0;
        if self.at_line_start {
            self.out.push_str(&Self::quote_marks(self.quote_depth));
            if let Some(marker) = self.marker.take() {
                self.out.push_str(&marker);
            }
            self.line_prefix_end = self.out.len();
            self.at_line_start = false;
        } else {
            match self.gap {
                Gap::None => {}
                Gap::Space => self.out.push(' '),
                // Between cells, what empty ones held (`&nbsp;`) goes: one tab
                // separates shown cells, and none starts a line.
                Gap::Tab if !self.line_has_content => self.out.truncate(self.line_prefix_end),
                Gap::Tab => {
                    let trimmed = self.out.trim_end_matches(' ').len().max(self.line_prefix_end);
                    self.out.truncate(trimmed);
                    if !self.out.ends_with('\t') {
                        self.out.push('\t');
                    }
                }
            }
        }
        self.gap = Gap::None;
        self.out.push(character);
        self.line_has_content |= shows;
    }

    /// Ends the current line: its trailing whitespace trimmed, and a line that
    /// showed nothing kept as a blank line only if the one before was not blank.
    fn end_line(&mut self) {
        let trimmed = self.out.trim_end_matches([' ', '\t']).len().max(self.line_start);
        self.out.truncate(trimmed);
        if self.line_has_content {
            self.blank_lines = 0;
        } else if self.blank_lines >= 1 {
            self.out.truncate(self.line_start);
            return;
        } else {
            let marks = self.out[self.line_start..].trim_end_matches(|c: char| c != '>').len();
            self.out.truncate(self.line_start + marks);
            self.blank_lines += 1;
        }
        self.out.push('\n');
    }

    fn start(&mut self, tag: &Tag<'_>) {
        let name = tag.name.as_str();
        if self.open_by_name.get("head").is_some_and(|open| *open > 0) && !HEAD_CONTENT.contains(&name) {
            self.end("head");
        }
        match name {
            "br" if self.hidden == 0 => self.line_break(),
            "hr" if self.hidden == 0 => {
                self.block_boundary(2);
                RULE.chars().for_each(|character| self.write(character, true));
                self.block_boundary(2);
            }
            _ => {}
        }
        if VOID.contains(&name) || tag.self_closing {
            return;
        }
        let role = if self.open.len() >= MOST_OPEN_ELEMENTS || self.hidden > 0 {
            Role::Inline
        } else if name == "head" || name == "template" || tag.hides() {
            Role::Hides
        } else {
            self.role_of(tag)
        };
        if self.open.len() < MOST_OPEN_ELEMENTS {
            self.begin(role, tag);
            self.open.push(Open { name: tag.name.clone(), role });
            *self.open_by_name.entry(tag.name.clone()).or_default() += 1;
        }
    }

    fn role_of(&self, tag: &Tag<'_>) -> Role {
        match tag.name.as_str() {
            "p" if tag.is_outlook_paragraph() => Role::Block(1),
            "p" => Role::Block(2),
            "blockquote" => Role::Quote,
            "ul" | "ol" | "dir" | "menu" => Role::List,
            "li" => Role::Item,
            "table" => Role::Table,
            "tr" => Role::Row,
            "td" | "th" => Role::Cell,
            "pre" | "listing" => Role::Preformatted,
            name if SPACED_BLOCKS.contains(&name) => Role::Block(2),
            name if BLOCKS.contains(&name) => Role::Block(1),
            _ => Role::Inline,
        }
    }

    /// What an element's start does to the text.
    fn begin(&mut self, role: Role, tag: &Tag<'_>) {
        match role {
            Role::Cell => {
                if let Some(cells) = self.rows.last_mut() {
                    if *cells > 0 {
                        self.gap = Gap::Tab;
                    }
                    *cells += 1;
                } else {
                    self.gap = self.gap.max(Gap::Space);
                }
            }
            Role::Inline => {}
            Role::Hides => self.hidden += 1,
            Role::Block(count) => self.block_boundary(count),
            Role::Quote => {
                self.block_boundary(2);
                self.set_quote_depth(self.quote_depth + 1);
            }
            Role::List => {
                self.block_boundary(if self.lists.is_empty() { 2 } else { 1 });
                let ordered = tag.name == "ol";
                let start = tag.attribute("start").and_then(|start| start.trim().parse().ok()).unwrap_or(1);
                self.lists.push(List { ordered, next_number: start });
            }
            Role::Item => {
                self.block_boundary(1);
                let indent = "  ".repeat(self.lists.len().saturating_sub(1));
                let marker = match self.lists.last_mut() {
                    Some(List { ordered: true, next_number }) => {
                        let number = *next_number;
                        *next_number = next_number.saturating_add(1);
                        format!("{number}. ")
                    }
                    _ => ["• ", "◦ ", "▪ "][self.lists.len().saturating_sub(1).min(2)].to_string(),
                };
                self.marker = Some(indent + &marker);
            }
            Role::Table => {
                self.block_boundary(1);
                self.rows.push(0);
            }
            Role::Row => {
                self.block_boundary(1);
                if let Some(cells) = self.rows.last_mut() {
                    *cells = 0;
                }
            }
            Role::Preformatted => {
                self.block_boundary(2);
                self.preformatted += 1;
                self.pre_newline = true;
            }
        }
    }

    fn end(&mut self, name: &str) {
        if self.open_by_name.get(name).is_some_and(|open| *open > 0) {
            while let Some(open) = self.open.pop() {
                if let Some(count) = self.open_by_name.get_mut(&open.name) {
                    *count -= 1;
                }
                self.finish_element(open.role);
                if open.name == name {
                    break;
                }
            }
        } else if self.hidden == 0 {
            // As a browser reads them: `</br>` is a break, `</p>` an empty paragraph.
            match name {
                "br" => self.line_break(),
                "p" => self.block_boundary(2),
                _ => {}
            }
        }
    }

    /// What an element's end does to the text: undoes what its start did.
    fn finish_element(&mut self, role: Role) {
        match role {
            Role::Inline | Role::Cell => {}
            Role::Hides => self.hidden -= 1,
            Role::Block(count) => self.block_boundary(count),
            Role::Quote => {
                self.block_boundary(2);
                self.set_quote_depth(self.quote_depth.saturating_sub(1));
            }
            Role::List => {
                self.lists.pop();
                self.block_boundary(if self.lists.is_empty() { 2 } else { 1 });
            }
            Role::Item => {
                self.marker = None;
                self.block_boundary(1);
            }
            Role::Table => {
                self.rows.pop();
                self.block_boundary(1);
            }
            Role::Row => self.block_boundary(1),
            Role::Preformatted => {
                self.preformatted -= 1;
                self.block_boundary(2);
            }
        }
    }

    /// The text, without the blank lines a document may start or end with.
    fn finish(self) -> String {
        self.out.trim_end().trim_start_matches('\n').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(html: &str, expected: &str) {
        assert_eq!(render(html, usize::MAX), expected, "\nfrom: {html}");
    }

    #[test]
    fn blocks_become_lines_and_paragraphs() {
        check(
            "<html><body><h1>Quarterly update</h1><p>Revenue grew by <b>twelve</b> percent.</p></body></html>",
            "Quarterly update\n\nRevenue grew by twelve percent.",
        );
        check("<div>one</div><div>two</div>", "one\ntwo");
        check("<p>one</p><p>two</p>", "one\n\ntwo");
        check("one<br>two<br/>three", "one\ntwo\nthree");
        check("<p>one<br></p><p>two</p>", "one\n\ntwo");
        check("<div>one</div><br><div>two</div>", "one\n\ntwo");
        check("<div>one</div><div><br></div><div>two</div>", "one\n\ntwo");
        check("<p>one</p><p></p><p></p><p>two</p>", "one\n\ntwo");
        check("one<br><br><br><br>two", "one\n\ntwo");
        check("<p>one</p><hr><p>two</p>", "one\n\n—————\n\ntwo");
        check("<section><h2>Title</h2>text</section>", "Title\n\ntext");
        check("one</p>two", "one\n\ntwo");
        check("one</br>two", "one\ntwo");
    }

    #[test]
    fn whitespace_collapses_as_in_a_browser() {
        check("  <p>\n  Hello,\n\t  world  </p>\n\n", "Hello, world");
        check("<span>Quarterly</span> <span>update</span>", "Quarterly update");
        check("<b>Revenue</b>grew", "Revenuegrew");
        check("a&nbsp;&nbsp; b", "a   b");
        check("<p>&nbsp;&nbsp;&nbsp;indented</p>", "   indented");
        check("<pre>\n  two spaces\n\n\tand a tab</pre><p>after</p>", "  two spaces\n\n\tand a tab\n\nafter");
    }

    #[test]
    fn character_references_are_decoded() {
        check(
            "Fish &amp; chips &lt;3 &quot;q&quot; &#8211; &#x2014; &eacute;t&eacute;",
            "Fish & chips <3 \"q\" – — été",
        );
        check("&#146;quoted&#146; &#150; &#0; &#x110000;", "’quoted’ – \u{fffd} \u{fffd}");
        check(
            "AT&amp T &copy 2026 &notareference; a&b ?x=1&y=2 & done",
            "AT& T © 2026 &notareference; a&b ?x=1&y=2 & done",
        );
        check("&#39 &#x27", "' '");
    }

    #[test]
    fn what_is_never_shown_is_left_out() {
        check(
            "<html><head><title>Subject</title><style>p { color: red }</style><meta charset=utf-8></head>\
             <body><script>if (a < b) document.write('<p>x</p>')</script><p>shown</p>\
             <template><p>inert</p></template><noscript>no script</noscript></body></html>",
            "shown\n\nno script",
        );
        check("<div style=\"display: none !important; max-height:0\">preview text</div><p>body</p>", "body");
        check("<p hidden>secret</p><p>body</p>", "body");
        check("<!-- a comment --><p>one</p><!--[if mso]><p>outlook only</p><![endif]--><p>two</p>", "one\n\ntwo");
        check("<!DOCTYPE html><?xml version=\"1.0\"?><p>one</p>", "one");
        check("<SCRIPT type=text/javascript>alert('</p>')</SCRIPT >after", "after");
        check("<p>a\u{ad}b\u{200b}c\u{feff}\u{34f}</p>", "abc");
        check("<style>never closed <p>gone", "");
        check("<p title=\"a > b\">text</p>", "text");
        check("a <b", "a");
        check("a < b and c<3", "a < b and c<3");
    }

    #[test]
    fn lists_get_bullets_and_numbers() {
        check("<p>Agenda:</p><ul><li>one</li><li>two</li></ul><p>after</p>", "Agenda:\n\n• one\n• two\n\nafter");
        check("<ol><li>first<li>second</ol>", "1. first\n2. second");
        check("<ol start=\"3\"><li>third</li></ol>", "3. third");
        check("<ul><li>outer<ul><li>inner</li></ul></li><li>next</li></ul>", "• outer\n  ◦ inner\n• next");
        check("<ul><li><p>para item</p></li></ul>", "• para item");
        check("<ul><li></li></ul><p>after</p>", "after");
    }

    #[test]
    fn quotes_are_marked_line_by_line() {
        check(
            "<p>Sounds good.</p><blockquote><p>Can we meet?</p><p>Ana</p></blockquote><p>Ben</p>",
            "Sounds good.\n\n> Can we meet?\n>\n> Ana\n\nBen",
        );
        check("<blockquote>outer<blockquote>inner</blockquote></blockquote>", "> outer\n>\n> > inner");
    }

    #[test]
    fn table_rows_are_lines_and_cells_are_tabbed() {
        check(
            "<table><tr><th>Quarter</th><th>Revenue</th></tr><tr><td>Q3</td><td>1.2m</td></tr></table>",
            "Quarter\tRevenue\nQ3\t1.2m",
        );
        check(
            "<table><tr><td>&nbsp;</td><td>Logo</td><td>&nbsp;</td><td>View online</td></tr></table>",
            "Logo\tView online",
        );
        check("<table><tr><td><p>a</p></td><td><p>b</p></td></tr></table>", "a\n\nb");
    }

    #[test]
    fn it_stops_soon_after_its_limit() {
        let html = "<p>word word word</p>".repeat(10_000);
        let text = render(&html, 1000);
        assert!(text.len() > 1000 && text.len() < 1100, "{}", text.len());
    }

    #[test]
    fn deep_and_unbalanced_markup_costs_one_pass() {
        let html = format!("{}text{}", "<div><blockquote>".repeat(50_000), "</nope>".repeat(50_000));
        let text = render(&html, usize::MAX);
        assert!(text.ends_with("text"), "{}", &text[text.len() - 20..]);
        check("</div></blockquote></ul></li>text", "text");
    }

    /// A newsletter as the big senders write them: a hidden preview, layout
    /// tables, a heading, paragraphs, a list, a button and a footer.
    #[test]
    fn a_newsletter_reads_as_its_paragraphs() {
        let html = r##"<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>The Ledger — November</title>
<!--[if gte mso 9]><xml><o:OfficeDocumentSettings><o:AllowPNG/><o:PixelsPerInch>96</o:PixelsPerInch></o:OfficeDocumentSettings></xml><![endif]-->
<style type="text/css">
  body { margin: 0; padding: 0; }
  @media only screen and (max-width: 480px) { .column { width: 100% !important; } }
</style>
</head>
<body style="margin:0;padding:0;background-color:#f4f4f4;">
<div style="display:none;font-size:1px;color:#f4f4f4;line-height:1px;max-height:0px;max-width:0px;opacity:0;overflow:hidden;">Revenue up 12%, a new office, and what's next&nbsp;&zwnj;&nbsp;&zwnj;&nbsp;&zwnj;&nbsp;&zwnj;</div>
<center>
<table role="presentation" border="0" cellpadding="0" cellspacing="0" width="100%">
  <tr>
    <td align="center" valign="top">
      <table role="presentation" width="600" cellpadding="0" cellspacing="0">
        <tr>
          <td><img src="https://cdn.letters.example/logo.png" alt="The Ledger" width="120"></td>
          <td align="right"><a href="https://letters.example/view/123" style="color:#999999;">View in browser</a></td>
        </tr>
        <tr>
          <td colspan="2" class="column" style="padding:24px;">
            <h1 style="font-size:28px;margin:0 0 12px;">Quarterly update</h1>
            <p style="margin:0 0 12px;">Dear reader,</p>
            <p style="margin:0 0 12px;">Revenue grew by <strong>twelve percent</strong> this quarter,
               and we opened an office in Lisbon.</p>
            <p style="margin:0 0 12px;">What&rsquo;s next:</p>
            <ul>
              <li>A new reporting tool&nbsp;&mdash; out in December</li>
              <li>Two more hires in support</li>
            </ul>
            <table role="presentation" cellpadding="0" cellspacing="0"><tr><td style="border-radius:4px;" bgcolor="#2456c8">
              <a href="https://letters.example/click?u=abc&amp;id=42" style="color:#ffffff;padding:12px 18px;display:inline-block;">Read the full report</a>
            </td></tr></table>
          </td>
        </tr>
        <tr>
          <td colspan="2" style="font-size:12px;color:#777777;">
            You receive this because you subscribed at letters.example.<br>
            <a href="https://letters.example/unsubscribe?id=42">Unsubscribe</a> &middot; <a href="https://letters.example/preferences">Preferences</a><br>
            The Ledger, 1 Main St, Lisbon
          </td>
        </tr>
      </table>
    </td>
  </tr>
</table>
</center>
</body>
</html>"##;
        check(
            html,
            "View in browser\n\
             \n\
             Quarterly update\n\
             \n\
             Dear reader,\n\
             \n\
             Revenue grew by twelve percent this quarter, and we opened an office in Lisbon.\n\
             \n\
             What’s next:\n\
             \n\
             • A new reporting tool — out in December\n\
             • Two more hires in support\n\
             \n\
             Read the full report\n\
             You receive this because you subscribed at letters.example.\n\
             Unsubscribe · Preferences\n\
             The Ledger, 1 Main St, Lisbon",
        );
    }

    /// A reply from Outlook: Word's head, its `MsoNormal` paragraphs (lines
    /// without margins, `&nbsp;` ones empty), `<o:p>`, a signature and the
    /// quoted header block of the message it answers.
    #[test]
    fn an_outlook_reply_reads_as_outlook_shows_it() {
        let html = r##"<html xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" xmlns:w="urn:schemas-microsoft-com:office:word" xmlns:m="http://schemas.microsoft.com/office/2004/12/omml" xmlns="http://www.w3.org/TR/REC-html40">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=utf-8">
<meta name="Generator" content="Microsoft Word 15 (filtered medium)">
<style><!--
/* Font Definitions */
@font-face
	{font-family:"Cambria Math";
	panose-1:2 4 5 3 5 4 6 3 2 4;}
p.MsoNormal, li.MsoNormal, div.MsoNormal
	{margin:0cm;
	font-size:11.0pt;
	font-family:"Calibri",sans-serif;}
.MsoChpDefault
	{mso-style-type:export-only;}
@page WordSection1
	{size:612.0pt 792.0pt;}
div.WordSection1
	{page:WordSection1;}
--></style><!--[if gte mso 9]><xml>
<o:shapedefaults v:ext="edit" spidmax="1026" />
</xml><![endif]-->
</head>
<body lang="EN-GB" link="#0563C1" vlink="#954F72" style="word-wrap:break-word">
<div class="WordSection1">
<p class="MsoNormal">Hi Ana,<o:p></o:p></p>
<p class="MsoNormal"><o:p>&nbsp;</o:p></p>
<p class="MsoNormal">Thanks &#8211; the figures look right. I&#8217;ve attached the signed copy.<o:p></o:p></p>
<p class="MsoNormal"><o:p>&nbsp;</o:p></p>
<p class="MsoNormal"><![if !supportLists]><span style="font-family:Symbol">·<span style="font:7.0pt &quot;Times New Roman&quot;">&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;&nbsp; </span></span><![endif]>Invoice 4471<o:p></o:p></p>
<p class="MsoNormal"><o:p>&nbsp;</o:p></p>
<p class="MsoNormal">Kind regards,<o:p></o:p></p>
<p class="MsoNormal"><b>Ben Ortiz</b><o:p></o:p></p>
<p class="MsoNormal"><span style="color:#767171">Finance | Example Ltd<o:p></o:p></span></p>
<p class="MsoNormal"><o:p>&nbsp;</o:p></p>
<div>
<div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm">
<p class="MsoNormal"><b><span lang="EN-US">From:</span></b><span lang="EN-US"> Ana Lima &lt;ana@customer.example&gt;
<br>
<b>Sent:</b> 27 November 2026 09:15<br>
<b>To:</b> Support &lt;support@mailroom.test&gt;<br>
<b>Subject:</b> Where is my invoice?<o:p></o:p></span></p>
</div>
</div>
<p class="MsoNormal"><o:p>&nbsp;</o:p></p>
<p class="MsoNormal">I have not received the invoice for order 4471.<o:p></o:p></p>
</div>
</body>
</html>"##;
        check(
            html,
            "Hi Ana,\n\
             \n\
             Thanks – the figures look right. I’ve attached the signed copy.\n\
             \n\
             ·       Invoice 4471\n\
             \n\
             Kind regards,\n\
             Ben Ortiz\n\
             Finance | Example Ltd\n\
             \n\
             From: Ana Lima <ana@customer.example>\n\
             Sent: 27 November 2026 09:15\n\
             To: Support <support@mailroom.test>\n\
             Subject: Where is my invoice?\n\
             \n\
             I have not received the invoice for order 4471.",
        );
    }

    /// A reply from Gmail: `div`s for lines, `<div><br></div>` for a blank one,
    /// and the message it answers in a `blockquote`.
    #[test]
    fn a_gmail_reply_keeps_its_quote() {
        let html = "<div dir=\"ltr\">Hi Ben,<div><br></div><div>Thanks, received.</div><div><br></div><div>Ana</div></div><br>\
                    <div class=\"gmail_quote\"><div dir=\"ltr\" class=\"gmail_attr\">On Fri, 27 Nov 2026 at 10:02, Ben Ortiz &lt;\
                    <a href=\"mailto:ben@example.org\">ben@example.org</a>&gt; wrote:<br></div>\
                    <blockquote class=\"gmail_quote\" style=\"margin:0px 0px 0px 0.8ex;border-left:1px solid rgb(204,204,204);padding-left:1ex\">\
                    <div dir=\"ltr\">Here is the invoice.<div><br></div><div>Ben</div></div></blockquote></div>";
        check(
            html,
            "Hi Ben,\n\nThanks, received.\n\nAna\n\nOn Fri, 27 Nov 2026 at 10:02, Ben Ortiz <ben@example.org> wrote:\n\n\
             > Here is the invoice.\n>\n> Ben",
        );
    }

    #[test]
    fn attributes_are_read_as_a_browser_reads_them() {
        let mut tokens = Tokens { html: "<a href='x>y' data-x=1 hidden/><IMG SRC=a.png/>", at: 0 };
        let Some(Token::Start(tag)) = tokens.next() else { panic!("a start tag") };
        assert_eq!(tag.name, "a");
        assert_eq!(tag.attributes, vec![("href".into(), "x>y"), ("data-x".into(), "1"), ("hidden".into(), "")]);
        assert!(tag.self_closing);
        let Some(Token::Start(tag)) = tokens.next() else { panic!("a start tag") };
        assert_eq!((tag.name.as_str(), tag.attribute("src")), ("img", Some("a.png/")));
        assert_eq!(tokens.next(), None);
    }
}
