// Tells the page how tall a message's formatted HTML is, and again whenever
// that changes (the frame's width, an image shown): message-body.js sizes the
// frame to it. The only script the frame runs: the frame's own policy and the
// page's allow it by its hash and nothing else (decision 0021, amended), and
// the frame's origin stays opaque, so this reaches nothing of the node's.
new ResizeObserver(() => {
  parent.postMessage({ mailroomFrameHeight: Math.ceil(document.documentElement.getBoundingClientRect().height) }, "*");
}).observe(document.documentElement);
