/*
 * Search on a site opened from disk (publisher.site, extra.evidence.offline: true).
 *
 * Material runs its search in a Web Worker loaded from the site. A page opened from disk
 * (file://) has an opaque origin, so Chromium refuses `new Worker("file:///…")` and the search
 * stays "Initializing" forever. On such a page only, this script (loaded in <head>, before the
 * theme's bundle) lets the theme create its search worker from the same code shipped a second
 * time as a script the page may load: assets/publisher/search-worker.js (written by the build
 * from the theme's own worker file, sealed in the manifest like every file), turned into a
 * blob: worker (the page's Content-Security-Policy allows `worker-src blob:` on offline sites).
 * The search index comes, as Material does it on file://, from search/search_index.js.
 *
 * Served over http(s), this script does nothing. Any other worker is created as usual.
 */
(function () {
  "use strict";

  if (location.protocol !== "file:" || typeof globalThis.Worker !== "function") return;

  const RealWorker = globalThis.Worker;
  // Where this script was loaded from: the one <script> of the page whose path ends in
  // assets/publisher/offline.js, found through the DOM's own prototypes. Never
  // document.currentScript or another property of `document`, which an element of the page's
  // prose could shadow (<img name="currentScript">).
  const scriptSrc = Object.getOwnPropertyDescriptor(HTMLScriptElement.prototype, "src").get;
  const found = new Set();
  for (const el of Document.prototype.querySelectorAll.call(document, "script[src]")) {
    const src = scriptSrc.call(el);
    if (/^file:\/\/[^?#]*\/assets\/publisher\/offline\.js$/.test(src)) found.add(src);
  }
  const SELF = found.size === 1 ? Array.from(found)[0] : "";
  const SEARCH_WORKER = /\/assets\/javascripts\/workers\/search\.[0-9a-f]+\.min\.js$/;
  let source = null; // Promise of the worker's code

  /** The worker's code, from assets/publisher/search-worker.js beside this script. */
  function workerSource() {
    if (!source) {
      source = new Promise((resolve, reject) => {
        const script = Document.prototype.createElement.call(document, "script");
        script.src = new URL("search-worker.js", SELF).href;
        script.onload = () => {
          // An own property, as search-worker.js assigns it: an element with that id is not one.
          const own = Object.getOwnPropertyDescriptor(globalThis, "__evidenceSearchWorker");
          const code = own ? own.value : undefined;
          if (typeof code === "string") resolve(code);
          else reject(new Error("search-worker.js did not provide the worker"));
        };
        script.onerror = () => reject(new Error("search-worker.js could not be loaded"));
        Node.prototype.appendChild.call(Object.getOwnPropertyDescriptor(Document.prototype, "head").get.call(document), script);
      });
    }
    return source;
  }

  /** A worker whose code arrives later: messages wait until it runs, replies are re-dispatched. */
  class DeferredWorker extends EventTarget {
    constructor() {
      super();
      this.queue = [];
      this.worker = null;
      this.ended = false;
      workerSource().then(
        (code) => {
          if (this.ended) return;
          const url = URL.createObjectURL(new Blob([code], { type: "text/javascript" }));
          this.worker = new RealWorker(url);
          this.worker.addEventListener("message", (event) => {
            this.dispatchEvent(new MessageEvent("message", { data: event.data }));
          });
          this.worker.addEventListener("error", () => this.dispatchEvent(new Event("error")));
          for (const message of this.queue) this.worker.postMessage(message);
          this.queue = [];
        },
        () => this.dispatchEvent(new Event("error")),
      );
    }

    postMessage(message) {
      if (this.worker) this.worker.postMessage(message);
      else this.queue.push(message);
    }

    terminate() {
      this.ended = true;
      if (this.worker) this.worker.terminate();
    }
  }

  function Worker(url, options) {
    const href = new URL(String(url), location.href).href;
    if (SELF && SEARCH_WORKER.test(href) && href.startsWith(new URL("../../", SELF).href)) {
      return new DeferredWorker();
    }
    return new RealWorker(url, options);
  }
  Worker.prototype = RealWorker.prototype;
  globalThis.Worker = Worker;
})();
