//! `render` held to what a browser shows: blocks and paragraphs, whitespace,
//! references, what is never shown, lists, quotes, tables, the limit, hostile
//! nesting, and whole messages as newsletters, Outlook and Gmail write them.

use mailroom_html_text::render;

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
    check("Fish &amp; chips &lt;3 &quot;q&quot; &#8211; &#x2014; &eacute;t&eacute;", "Fish & chips <3 \"q\" – — été");
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
