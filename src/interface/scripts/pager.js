// Lists the node answers a page at a time (messages, a search, sends,
// approvals): how many a page holds, and the button that asks for the next.

import { h } from "./dom.js";
import { perform, statusArea } from "./shared.js";

/** How many items a paged list (messages, a search, sends, approvals) shows at a time. */
export const PER_PAGE = 50;

/**
 * A list the node answers a page at a time (`limit` and `cursor` in, `next_cursor`
 * out). `fetchPage(query)` asks for one page and answers `{ items, next_cursor }`;
 * `show(items)` puts a later page's items on the page. Answers `first()`, which
 * loads the first page and answers its items (throwing its refusal), and the
 * element holding the button that asks for the next page and any refusal of it.
 */
export function pager({ fetchPage, show, more: moreText, failure }) {
  const more = h("button", { type: "button", class: "secondary more", hidden: true, text: moreText });
  const status = statusArea();
  let cursor = null;
  async function load() {
    const page = await fetchPage({ limit: PER_PAGE, cursor });
    cursor = page.next_cursor ?? null;
    more.hidden = !cursor;
    return page.items;
  }
  more.addEventListener("click", () => perform(status, [more], async () => show(await load()), failure));
  return {
    element: h("div", {}, more, status),
    first() {
      cursor = null;
      return load();
    },
  };
}
