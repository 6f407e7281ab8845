//! The text being written: what each element does to it (a block's line breaks,
//! a list's markers, a quote's marks, a cell's tab, what hides its content) and
//! how whitespace collapses, as a browser lays them out.

use std::collections::HashMap;

use crate::references::decode;
use crate::tokens::Tag;

/// How deeply elements are followed. Browsers stop nesting at 512; beyond
/// this an element is shown inline, so nothing the input does can make the
/// stack grow without bound.
const MOST_OPEN_ELEMENTS: usize = 512;

/// Elements that never have content or an end tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param", "source", "track",
    "wbr",
];

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
pub(crate) struct Text {
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
    pub(crate) fn new(limit: usize) -> Text {
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

    pub(crate) fn is_full(&self) -> bool {
        self.out.len() > self.limit
    }

    pub(crate) fn characters(&mut self, text: &str) {
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

    pub(crate) fn start(&mut self, tag: &Tag<'_>) {
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

    pub(crate) fn end(&mut self, name: &str) {
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
    pub(crate) fn finish(self) -> String {
        self.out.trim_end().trim_start_matches('\n').to_string()
    }
}
