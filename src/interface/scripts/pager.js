// Lists the node answers a page at a time (messages, a search, sends,
// approvals, conversations): how many a page holds, and the button that asks
// for the next.

import { h } from "./dom.js";
import { perform, statusArea } from "./shared.js";

/** How many items a paged list (messages, a search, sends, approvals) shows at a time. */
export const PER_PAGE = 50;

/**
 * A list the node answers a page at a time (`limit` and `cursor` in, `next_cursor`
 * out). `fetchPage(query)` asks for one page and answers `{ items, next_cursor }`;
 * `show(items)` puts a later page's items on the page. Answers `first(pages)`,
 * which loads the list afresh, `pages` pages of it (one unless asked, as far as
 * there are), and answers their items (throwing a refusal), and the element
 * holding the button that asks for the next page and any refusal of it.
 *
 * A next page still on its way when the list is loaded afresh (its filters
 * changed) belongs to the list no longer shown: it is dropped, neither shown nor
 * taken as where the new list continues.
 */
export function pager({ fetchPage, show, more: moreText, failure }) {
  const more = h("button", { type: "button", class: "secondary more", hidden: true, text: moreText });
  const status = statusArea();
  let cursor = null;
  /** Which loading of the list afresh the shown list comes from. */
  let generation = 0;
  /** The next page being loaded, until it is shown (or dropped). */
  let loadingMore = null;
  more.addEventListener("click", () => perform(status, [more], async () => {
    const mine = generation;
    const loading = fetchPage({ limit: PER_PAGE, cursor });
    loadingMore = loading.catch(() => {});
    try {
      const page = await loading;
      if (mine !== generation) return;
      cursor = page.next_cursor ?? null;
      more.hidden = !cursor;
      show(page.items);
    } finally {
      loadingMore = null;
    }
  }, failure));
  return {
    element: h("div", {}, more, status),
    /**
     * Resolves once no next page is being loaded: a list read again because
     * something changed (not because the person asked) waits for the page the
     * person asked for, rather than dropping it.
     */
    async settled() {
      while (loadingMore) await loadingMore;
    },
    async first(pages = 1) {
      const mine = ++generation;
      status.replaceChildren();
      let next = null;
      const items = [];
      for (let loaded = 0; loaded < pages; loaded++) {
        const page = await fetchPage({ limit: PER_PAGE, cursor: next });
        items.push(...page.items);
        next = page.next_cursor ?? null;
        if (!next) break;
      }
      if (mine === generation) {
        cursor = next;
        more.hidden = !cursor;
      }
      return items;
    },
  };
}
