/*
 * Reader-side verification of evidence excerpts (publisher.site).
 *
 * Every excerpt on a page names a snapshot and a half-open code-point range: an element with
 * data-source-id, data-start and data-end (a footnote excerpt), or the <mark class="evidence-span">
 * segments of a snapshot text (a highlight on a source page). A "verify" button beside each one
 * fetches the snapshot record the site publishes at sources/<source_id>/record.json and checks,
 * in this browser and trusting nothing the publisher computed:
 *
 *   1. source_id = "src-" + SHA-256(utf8(url) + 0x00 + utf8(text)), and equals the id on the page;
 *   2. content_hash = "sha256:" + SHA-256(utf8(text));
 *   3. record_hash = "sha256:" + SHA-256(canonical JSON of every other field) — this seals the
 *      title, access and paper ids shown beside the excerpt. A record without one is unsealed:
 *      never shown as verified;
 *   4. code points [start, end) of text are exactly the excerpt shown.
 *
 * Nothing on the page says where a record is: the address is always
 * <site root>/sources/<source_id>/record.json, the site root being where this script itself was
 * loaded from (<site root>/assets/publisher/verify.js), the source id one that matches
 * src-<64 hex>, and the result on the page's own origin (http, https or file); anything else is
 * refused, and so is a redirect. A page opened from disk (file://) cannot fetch: there the record
 * comes from sources/<source_id>/record.js beside record.json (sites built with
 * extra.evidence.offline), a script that hands over the same JSON text; see register() below.
 *
 * SHA-256 comes from WebCrypto in a secure context (https, http://127.0.0.1, http://localhost, and
 * file:// in Chromium); elsewhere (plain http on another host) from the self-contained one below,
 * a mebibyte at a time with the page kept responsive in between (records can be tens of MB).
 * Nothing is loaded from anywhere but the site itself. The page works the same without this
 * script: it only adds the buttons.
 */
(function () {
  "use strict";

  // --------------------------------------------------------------------------------------------
  // SHA-256 (FIPS 180-4). Round constants: first 32 bits of the fractional parts of the cube roots
  // of the first 64 primes; initial state: the same for the square roots of the first 8 primes.

  const K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ]);
  const H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

  /** Incremental SHA-256: update(bytes) any number of times, then digest() once. */
  class Sha256 {
    constructor() {
      this.h = Uint32Array.from(H0);
      this.w = new Uint32Array(64);
      this.block = new Uint8Array(64);
      this.fill = 0;
      this.length = 0; // bytes hashed so far (exact up to 2^53)
      this.done = false;
    }

    _compress(bytes, offset) {
      const w = this.w;
      const h = this.h;
      for (let i = 0; i < 16; i++) {
        const j = offset + 4 * i;
        w[i] = (bytes[j] << 24) | (bytes[j + 1] << 16) | (bytes[j + 2] << 8) | bytes[j + 3];
      }
      for (let i = 16; i < 64; i++) {
        const a = w[i - 15];
        const b = w[i - 2];
        const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
        const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
        w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
      }
      let a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
      for (let i = 0; i < 64; i++) {
        const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
        const ch = (e & f) ^ (~e & g);
        const t1 = (k + S1 + ch + K[i] + w[i]) | 0;
        const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
        const maj = (a & b) ^ (a & c) ^ (b & c);
        const t2 = (S0 + maj) | 0;
        k = g;
        g = f;
        f = e;
        e = (d + t1) | 0;
        d = c;
        c = b;
        b = a;
        a = (t1 + t2) | 0;
      }
      h[0] = (h[0] + a) | 0;
      h[1] = (h[1] + b) | 0;
      h[2] = (h[2] + c) | 0;
      h[3] = (h[3] + d) | 0;
      h[4] = (h[4] + e) | 0;
      h[5] = (h[5] + f) | 0;
      h[6] = (h[6] + g) | 0;
      h[7] = (h[7] + k) | 0;
    }

    update(bytes) {
      if (this.done) throw new Error("Sha256: update after digest");
      let i = 0;
      const n = bytes.length;
      this.length += n;
      if (this.fill > 0) {
        while (i < n && this.fill < 64) this.block[this.fill++] = bytes[i++];
        if (this.fill < 64) return this;
        this._compress(this.block, 0);
        this.fill = 0;
      }
      for (; i + 64 <= n; i += 64) this._compress(bytes, i);
      while (i < n) this.block[this.fill++] = bytes[i++];
      return this;
    }

    digest() {
      if (this.done) throw new Error("Sha256: digest twice");
      this.done = true;
      const bits = this.length * 8;
      const pad = new Uint8Array(((this.fill < 56 ? 56 : 120) - this.fill) + 8);
      pad[0] = 0x80;
      const hi = Math.floor(bits / 0x100000000);
      const lo = bits >>> 0;
      const m = pad.length - 8;
      pad[m] = hi >>> 24; pad[m + 1] = hi >>> 16; pad[m + 2] = hi >>> 8; pad[m + 3] = hi;
      pad[m + 4] = lo >>> 24; pad[m + 5] = lo >>> 16; pad[m + 6] = lo >>> 8; pad[m + 7] = lo;
      this.done = false;
      this.update(pad);
      this.done = true;
      const out = new Uint8Array(32);
      for (let i = 0; i < 8; i++) {
        out[4 * i] = this.h[i] >>> 24;
        out[4 * i + 1] = this.h[i] >>> 16;
        out[4 * i + 2] = this.h[i] >>> 8;
        out[4 * i + 3] = this.h[i];
      }
      return out;
    }
  }

  function toHex(bytes) {
    let s = "";
    for (let i = 0; i < bytes.length; i++) s += (bytes[i] < 16 ? "0" : "") + bytes[i].toString(16);
    return s;
  }

  /** Hex SHA-256 of the concatenated byte arrays, with the pure-JS implementation. */
  function sha256HexFallback(parts) {
    const h = new Sha256();
    for (const part of parts) h.update(part);
    return toHex(h.digest());
  }

  const CHUNK = 1 << 20;

  /**
   * The same, a mebibyte at a time, yielding to the page between chunks: a record of tens of
   * megabytes is hashed without freezing the page (the reader can scroll, and see the progress).
   */
  async function sha256HexChunked(parts, progress) {
    const h = new Sha256();
    const total = parts.reduce((n, p) => n + p.length, 0);
    let done = 0;
    for (const part of parts) {
      for (let at = 0; at < part.length; at += CHUNK) {
        const piece = part.subarray(at, Math.min(part.length, at + CHUNK));
        h.update(piece);
        done += piece.length;
        if (total > CHUNK) {
          if (progress) progress(done / total);
          await new Promise((resolve) => setTimeout(resolve, 0));
        }
      }
    }
    return toHex(h.digest());
  }

  function webCrypto() {
    const c = globalThis.crypto;
    return globalThis.isSecureContext && c && c.subtle && typeof c.subtle.digest === "function" ? c.subtle : null;
  }

  /** Hex SHA-256 of the concatenated byte arrays: WebCrypto when available, else the fallback. */
  async function sha256Hex(parts, options) {
    const subtle = options && options.fallback ? null : webCrypto();
    if (!subtle) return sha256HexChunked(parts, options && options.progress);
    let data = parts[0] || new Uint8Array(0);
    if (parts.length > 1) {
      data = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) {
        data.set(p, at);
        at += p.length;
      }
    }
    return toHex(new Uint8Array(await subtle.digest("SHA-256", data)));
  }

  // --------------------------------------------------------------------------------------------
  // Code points. Offsets count Unicode code points (as Python's str does); JS strings are UTF-16,
  // so a character outside the BMP is two code units here and one code point there.

  const STRIDE = 1024;

  /**
   * Maps code-point offsets of one text to UTF-16 offsets in O(STRIDE) per lookup, after one
   * O(n) pass that records the code-unit offset of every STRIDE-th code point.
   */
  class CodePoints {
    constructor(text) {
      this.text = text;
      const marks = [0];
      let cp = 0;
      let i = 0;
      const n = text.length;
      while (i < n) {
        const c = text.charCodeAt(i);
        i += c >= 0xd800 && c <= 0xdbff && i + 1 < n && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
        cp++;
        if (cp % STRIDE === 0) marks.push(i);
      }
      this.marks = Uint32Array.from(marks);
      this.length = cp;
    }

    /** UTF-16 offset of code point ``cp`` (0 <= cp <= length). */
    unit(cp) {
      const text = this.text;
      let i = this.marks[Math.floor(cp / STRIDE)];
      for (let k = cp % STRIDE; k > 0; k--) {
        const c = text.charCodeAt(i);
        i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
      }
      return i;
    }

    /** Code points [start, end) as a string, or null when the range is not inside the text. */
    slice(start, end) {
      if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || start > end || end > this.length) {
        return null;
      }
      const a = this.unit(start);
      return this.text.slice(a, a + (end === start ? 0 : this._span(a, end - start)));
    }

    _span(from, count) {
      const text = this.text;
      let i = from;
      for (let k = 0; k < count; k++) {
        const c = text.charCodeAt(i);
        i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
      }
      return i - from;
    }
  }

  function isLow(c) {
    return c >= 0xdc00 && c <= 0xdfff;
  }

  /** Code points [start, end) of ``text`` (null when out of range). */
  function codePointSlice(text, start, end) {
    return new CodePoints(text).slice(start, end);
  }

  /** Index (in code points) of the first difference between two strings, or -1 when equal. */
  function firstDifference(a, b) {
    const ia = a[Symbol.iterator]();
    const ib = b[Symbol.iterator]();
    for (let index = 0; ; index++) {
      const x = ia.next();
      const y = ib.next();
      if (x.done && y.done) return -1;
      if (x.done || y.done || x.value !== y.value) return index;
    }
  }

  function codePointAtIndex(s, index) {
    let k = 0;
    for (const ch of s) {
      if (k++ === index) return ch;
    }
    return null;
  }

  function describeChar(ch) {
    if (ch === null) return "end of text";
    const hex = ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
    return `U+${hex} ${JSON.stringify(ch)}`;
  }

  // --------------------------------------------------------------------------------------------
  // Canonical JSON (sorted keys by code point, no whitespace, UTF-8, no ASCII escaping), as the
  // publisher hashes it for record_hash. JSON.stringify escapes exactly what Python's json module
  // escapes with ensure_ascii=False; only the key order needs doing here.

  function compareCodePoints(a, b) {
    const ia = a[Symbol.iterator]();
    const ib = b[Symbol.iterator]();
    for (;;) {
      const x = ia.next();
      const y = ib.next();
      if (x.done || y.done) return x.done === y.done ? 0 : x.done ? -1 : 1;
      const d = x.value.codePointAt(0) - y.value.codePointAt(0);
      if (d !== 0) return d;
    }
  }

  function canonicalJson(value) {
    if (Array.isArray(value)) return "[" + value.map(canonicalJson).join(",") + "]";
    if (value !== null && typeof value === "object") {
      const keys = Object.keys(value).sort(compareCodePoints);
      return "{" + keys.map((k) => JSON.stringify(k) + ":" + canonicalJson(value[k])).join(",") + "}";
    }
    if (typeof value === "number" && !Number.isSafeInteger(value)) {
      throw new Error("a number that is not an integer");
    }
    return JSON.stringify(value);
  }

  // --------------------------------------------------------------------------------------------
  // Verification of one excerpt against a record.

  const SOURCE_ID = /^src-[0-9a-f]{64}$/;
  const utf8 = new TextEncoder();

  function short(digest) {
    return digest.length > 24 ? `${digest.slice(0, 16)}…${digest.slice(-8)}` : digest;
  }

  /**
   * Check a parsed record against the claim of a page (source id, range, excerpt shown).
   * Returns {ok, problems: [{check, message, expected?, got?, index?}], notes: [...]} — every
   * problem, not only the first.
   */
  async function verifyRecord(record, claim, options) {
    const problems = [];
    const notes = [];
    if (record === null || typeof record !== "object" || Array.isArray(record)) {
      problems.push({ check: "record", message: "record.json is not a JSON object" });
      return { ok: false, problems, notes };
    }
    const { url, text } = record;
    if (typeof url !== "string" || typeof text !== "string") {
      problems.push({ check: "record", message: "record.json has no string url and text" });
      return { ok: false, problems, notes };
    }
    const textBytes = utf8.encode(text);
    // Progress over the three digests (a large record on a page without WebCrypto takes seconds).
    const step = (k) =>
      options && options.progress ? { ...options, progress: (f) => options.progress((k + f) / 3) } : options;
    // 1. Identity: the digest of url and text is the id the page names.
    const gotId = "src-" + (await sha256Hex([utf8.encode(url), new Uint8Array([0]), textBytes], step(0)));
    if (gotId !== claim.sourceId) {
      problems.push({
        check: "source_id",
        message: `source_id mismatch: expected ${claim.sourceId}, got ${gotId}`,
        expected: claim.sourceId,
        got: gotId,
      });
    }
    if (record.source_id !== claim.sourceId) {
      problems.push({
        check: "record source_id",
        message: `record names itself ${record.source_id}, not ${claim.sourceId}`,
        expected: claim.sourceId,
        got: String(record.source_id),
      });
    }
    // 2. Body hash.
    const gotBody = "sha256:" + (await sha256Hex([textBytes], step(1)));
    if (gotBody !== record.content_hash) {
      problems.push({
        check: "content_hash",
        message: `content_hash mismatch: expected ${record.content_hash}, got ${gotBody}`,
        expected: String(record.content_hash),
        got: gotBody,
      });
    }
    // 3. Metadata seal: a record without one is never verified.
    if (record.record_hash === undefined) {
      problems.push({ check: "record_hash", message: "metadata unsealed (no record_hash): nothing seals it" });
    } else if (typeof record.record_hash !== "string" || !/^sha256:[0-9a-f]{64}$/.test(record.record_hash)) {
      problems.push({ check: "record_hash", message: "record_hash is not sha256: and 64 hex digits" });
    } else {
      const body = {};
      for (const key of Object.keys(record)) if (key !== "record_hash") body[key] = record[key];
      let gotSeal;
      try {
        gotSeal = "sha256:" + (await sha256Hex([utf8.encode(canonicalJson(body))], step(2)));
      } catch (err) {
        gotSeal = `(not computable: ${err.message})`;
      }
      if (gotSeal !== record.record_hash) {
        problems.push({
          check: "record_hash",
          message: `record_hash mismatch: expected ${record.record_hash}, got ${gotSeal}`,
          expected: String(record.record_hash),
          got: gotSeal,
        });
      }
    }
    // 4. The excerpt is exactly code points [start, end) of the text.
    const points = claim.points || new CodePoints(text);
    const quoted = points.slice(claim.start, claim.end);
    if (quoted === null) {
      problems.push({
        check: "range",
        message: `range [${claim.start}, ${claim.end}) is outside the text (${points.length} code points)`,
      });
    } else if (quoted !== claim.shown) {
      const index = firstDifference(quoted, claim.shown);
      problems.push({
        check: "excerpt",
        message:
          `excerpt differs at code point ${index} (offset ${claim.start + index}): expected ` +
          `${describeChar(codePointAtIndex(quoted, index))}, got ${describeChar(codePointAtIndex(claim.shown, index))}`,
        index,
        expected: describeChar(codePointAtIndex(quoted, index)),
        got: describeChar(codePointAtIndex(claim.shown, index)),
      });
    }
    return { ok: problems.length === 0, problems, notes };
  }

  // --------------------------------------------------------------------------------------------
  // Fetching records: once per URL and page view; the parsed record keeps its code-point index.

  // Where this script was loaded from, read once while it runs (never from an attribute later).
  const SCRIPT_URL = document.currentScript && document.currentScript.src ? document.currentScript.src : "";
  const SCRIPT_PATH = "assets/publisher/verify.js";
  const SCHEMES = ["http:", "https:", "file:"];
  const records = new Map();

  function sameOrigin(url) {
    const here = new URL(location.href);
    return url.protocol === here.protocol && url.origin === here.origin && url.host === here.host;
  }

  /** The site root: two folders above this script, on the page's own origin; else an error. */
  function siteRoot() {
    if (!SCHEMES.includes(location.protocol)) throw new Error(`refusing to verify on a ${location.protocol} page`);
    if (!SCRIPT_URL) throw new Error("cannot tell where this site is (the verifier was not loaded as a file)");
    const script = new URL(SCRIPT_URL);
    if (!sameOrigin(script) || !script.pathname.endsWith("/" + SCRIPT_PATH) || script.search || script.hash) {
      throw new Error("refusing to fetch records: the verifier was not loaded from this site");
    }
    return new URL("../../", script);
  }

  /** sources/<source_id>/<name> of this site (record.json, or record.js), for a well-formed source id only. */
  function recordUrl(sourceId, name) {
    if (!SOURCE_ID.test(sourceId)) throw new Error(`not a source id: ${sourceId}`);
    const url = new URL(`sources/${sourceId}/${name || "record.json"}`, siteRoot());
    if (!sameOrigin(url)) throw new Error("refusing to fetch a record from another origin");
    return url.href;
  }

  async function parseRecord(buffer) {
    let text;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(buffer);
    } catch (err) {
      throw new Error("record.json is not valid UTF-8");
    }
    return parseRecordText(text);
  }

  function parseRecordText(text) {
    let record;
    try {
      record = JSON.parse(text);
    } catch (err) {
      throw new Error(`record.json is not valid JSON (${err.message})`);
    }
    const entry = { record, points: null };
    if (record && typeof record.text === "string") entry.points = new CodePoints(record.text);
    return entry;
  }

  // Pages opened from disk cannot fetch. An offline site (extra.evidence.offline) publishes each
  // record a second time as sources/<source_id>/record.js, which calls register() with the
  // record's JSON text. It is loaded only from that address, by a <script> element made here; a
  // registration is accepted only from the script being run at that address, for the id it
  // was loaded for, once. The text is then parsed and checked exactly as a fetched record.json.
  const scripts = new Map(); // script URL -> {sourceId, resolve}

  function register(sourceId, text) {
    const script = document.currentScript;
    const url = script && script.src;
    const waiting = url ? scripts.get(url) : undefined;
    if (!waiting || waiting.sourceId !== sourceId || typeof text !== "string") return false;
    scripts.delete(url);
    waiting.resolve(text);
    return true;
  }

  function loadRecordScript(sourceId) {
    const url = recordUrl(sourceId, "record.js");
    let hit = records.get(url);
    if (!hit) {
      hit = new Promise((resolve, reject) => {
        scripts.set(url, { sourceId, resolve });
        const script = document.createElement("script");
        script.src = url;
        script.onload = () => {
          if (scripts.delete(url)) reject(new Error(`${url} did not hand over the record`));
          script.remove();
        };
        script.onerror = () => {
          scripts.delete(url);
          script.remove();
          reject(new Error(`could not load ${url} (this site was not built with extra.evidence.offline)`));
        };
        document.head.appendChild(script);
      }).then(parseRecordText);
      records.set(url, hit);
      hit.catch(() => records.delete(url));
    }
    return hit;
  }

  function loadRecord(url) {
    let hit = records.get(url);
    if (!hit) {
      hit = fetch(url, { cache: "no-cache", credentials: "same-origin", redirect: "error" })
        .then((response) => {
          if (!response.ok) throw new Error(`could not fetch ${url} (HTTP ${response.status})`);
          if (response.url && response.url !== url) throw new Error(`${url} was answered from elsewhere`);
          return response.arrayBuffer();
        }, (err) => {
          throw new Error(`could not fetch ${url} (${err.message})` +
            (location.protocol === "file:" ? "; pages opened from disk cannot fetch — choose the file" : ""));
        })
        .then(parseRecord);
      records.set(url, hit);
      hit.catch(() => records.delete(url));
    }
    return hit;
  }

  // --------------------------------------------------------------------------------------------
  // The page: find excerpts and highlights, add a button beside each, verify on click.

  // A whole snapshot text, or one context window of it (extra.evidence.source_text: windows).
  const SNAPSHOT = "pre.evidence-snapshot[data-source-id], pre.evidence-window[data-window-of]";

  /** Marks of span "s-e" inside a snapshot block, in document order, with their joined text. */
  function highlightOf(block, start, end) {
    const token = `${start}-${end}`;
    const marks = Array.from(block.querySelectorAll("mark.evidence-span")).filter((m) =>
      (m.getAttribute("data-spans") || "").split(/\s+/).includes(token),
    );
    let expect = start;
    let contiguous = marks.length > 0;
    let shown = "";
    for (const m of marks) {
      if (Number(m.getAttribute("data-start")) !== expect) contiguous = false;
      expect = Number(m.getAttribute("data-end"));
      shown += m.textContent;
    }
    if (expect !== end) contiguous = false;
    return { marks, shown, contiguous };
  }

  /** The excerpt element each button was made for (the page cannot point a button elsewhere). */
  const EXCERPTS = new WeakMap();

  function claimOf(button) {
    const sourceId = button.getAttribute("data-source-id");
    const start = Number(button.getAttribute("data-start"));
    const end = Number(button.getAttribute("data-end"));
    let shown;
    let contiguous = true;
    const kind = button.getAttribute("data-kind");
    if (kind === "highlight") {
      const block = button.closest(SNAPSHOT);
      const found = highlightOf(block, start, end);
      shown = found.shown;
      contiguous = found.contiguous;
    } else {
      const excerpt = EXCERPTS.get(button);
      shown = excerpt ? excerpt.textContent : "";
      contiguous = !!excerpt;
    }
    return { sourceId, start, end, shown, contiguous };
  }

  function setState(button, state, label, detail) {
    button.setAttribute("data-state", state);
    button.setAttribute("data-label", label);
    button.setAttribute("aria-label", label);
    button.title = detail || label;
    button.setAttribute("data-detail", detail || label);
  }

  async function verifyButton(button, supplied) {
    const claim = claimOf(button);
    if (!SOURCE_ID.test(claim.sourceId)) {
      setState(button, "mismatch", `not a source id: ${claim.sourceId}`);
      return;
    }
    setState(button, "working", "verifying…");
    try {
      const entry =
        supplied ||
        (await (location.protocol === "file:"
          ? loadRecordScript(claim.sourceId)
          : loadRecord(recordUrl(claim.sourceId))));
      claim.points = entry.points;
      const progress = (f) => setState(button, "working", `verifying… ${Math.floor(f * 100)}%`);
      const result = await verifyRecord(entry.record, claim, { progress });
      if (!claim.contiguous) {
        result.ok = false;
        result.problems.push({ check: "highlight", message: "the highlight is not one contiguous range" });
      }
      if (result.ok) {
        const how = webCrypto() ? "WebCrypto" : "built-in SHA-256";
        const detail =
          `Verified in this browser (${how}): SHA-256(url ‖ 0x00 ‖ text) = ${claim.sourceId}; ` +
          `content_hash matches; record_hash matches; ` +
          `code points [${claim.start}, ${claim.end}) are exactly the excerpt shown.`;
        setState(button, "verified", "✓ verified", detail);
      } else {
        const first = result.problems[0];
        const label = `✗ ${first.check}: ${first.message}`;
        setState(button, "mismatch", label, result.problems.map((p) => p.message).join("\n"));
      }
    } catch (err) {
      setState(button, "error", `✗ ${err.message}`);
      if (location.protocol === "file:") offerFile(button);
    }
  }

  /** A page opened from disk whose site has no record.js: let the reader pick record.json themselves. */
  function offerFile(button) {
    if (button.nextElementSibling && button.nextElementSibling.classList.contains("evidence-verify-file")) return;
    const input = document.createElement("input");
    input.type = "file";
    input.accept = ".json,application/json";
    input.className = "evidence-verify-file";
    input.setAttribute("aria-label", "choose record.json to verify against");
    input.addEventListener("change", async () => {
      const file = input.files && input.files[0];
      if (!file) return;
      try {
        await verifyButton(button, await parseRecord(await file.arrayBuffer()));
      } catch (err) {
        setState(button, "error", `✗ ${err.message}`);
      }
    });
    button.after(input);
  }

  function makeButton(sourceId, start, end, kind) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "evidence-verify";
    button.setAttribute("data-source-id", sourceId);
    button.setAttribute("data-start", String(start));
    button.setAttribute("data-end", String(end));
    button.setAttribute("data-kind", kind);
    button.setAttribute("data-evidence-control", "");
    // The label is drawn by CSS (attr(data-label)), so the text of a snapshot stays exactly the
    // snapshot: selecting and copying it never picks up a button label.
    setState(
      button,
      "idle",
      "verify",
      `Check in this browser that this excerpt is exactly code points [${start}, ${end}) of ${sourceId}`,
    );
    return button;
  }

  function scan(root) {
    const scope = root || document;
    // Footnote and report excerpts: elements carrying the three data attributes.
    for (const el of scope.querySelectorAll("[data-source-id][data-start][data-end]")) {
      if (el.hasAttribute("data-evidence-control") || el.hasAttribute("data-verify-ready")) continue;
      if (el.closest(SNAPSHOT) || el.closest(".md-tooltip2")) continue;
      el.setAttribute("data-verify-ready", "");
      const button = makeButton(
        el.getAttribute("data-source-id"),
        Number(el.getAttribute("data-start")),
        Number(el.getAttribute("data-end")),
        "excerpt",
      );
      EXCERPTS.set(button, el);
      const link = el.nextElementSibling && el.nextElementSibling.classList.contains("evidence-link")
        ? el.nextElementSibling
        : null;
      (link || el).after(button);
    }
    // Highlights of a snapshot text: one button after the last segment of each cited span.
    for (const block of scope.querySelectorAll(SNAPSHOT)) {
      if (block.hasAttribute("data-verify-ready")) continue;
      block.setAttribute("data-verify-ready", "");
      const sourceId = block.getAttribute("data-source-id") || block.getAttribute("data-window-of");
      const last = new Map();
      for (const mark of block.querySelectorAll("mark.evidence-span")) {
        for (const token of (mark.getAttribute("data-spans") || "").split(/\s+/)) {
          if (/^\d+-\d+$/.test(token)) last.set(token, mark);
        }
      }
      for (const [token, mark] of last) {
        const [start, end] = token.split("-").map(Number);
        mark.after(makeButton(sourceId, start, end, "highlight"));
      }
    }
  }

  document.addEventListener("click", (event) => {
    const button = event.target instanceof Element ? event.target.closest("button.evidence-verify") : null;
    if (!button) return;
    event.preventDefault();
    verifyButton(button);
  });

  /** Outline every segment of the span the address names (#span-<start>-<end>), not only the first. */
  function markCurrent() {
    for (const el of document.querySelectorAll("mark.evidence-current")) el.classList.remove("evidence-current");
    const match = /^#span-(\d+)-(\d+)$/.exec(location.hash);
    if (!match) return;
    for (const block of document.querySelectorAll(SNAPSHOT)) {
      for (const mark of highlightOf(block, Number(match[1]), Number(match[2])).marks) {
        mark.classList.add("evidence-current");
      }
    }
  }

  function start() {
    scan(document);
    markCurrent();
  }

  window.addEventListener("hashchange", markCurrent);

  // Scanning is idempotent; Material's document$ also announces pages loaded by instant navigation.
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
  if (globalThis.document$ && typeof globalThis.document$.subscribe === "function") {
    globalThis.document$.subscribe(start);
  }

  globalThis.EvidenceVerify = Object.freeze({
    Sha256,
    sha256Hex,
    sha256HexFallback,
    sha256HexChunked,
    CodePoints,
    codePointSlice,
    firstDifference,
    canonicalJson,
    verifyRecord,
    register,
    scan,
  });
})();
