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
 * A verify button first loads the excerpt's Merkle proof, sources/<source_id>/proofs/<start>-<end>.js
 * (CONTRACT section 16; a few kilobytes whatever the source's size), and checks that the covering
 * chunks and their RFC 9162 paths lead to the root, and that the root is signed by an acquisition
 * event (Ed25519, checked with WebCrypto) that also names the record's record_hash: verified
 * against "a signed root". Without a signed root, it checks the whole record instead (1-4 above):
 * verified against "the full text"; a source published without its text (source_text: proofs)
 * has no other anchor. Every source page also offers "verify the whole record" (1-3, and its
 * merkle_root recomputed from the text) as an explicit action.
 *
 * Nothing on the page says where a record or proof is: the address is always under
 * <site root>/sources/<source_id>/, the site root being where this script itself was loaded from
 * (<site root>/assets/publisher/verify.js, found among the page's <script> elements, never through
 * document.currentScript or any other property of `document` that prose could shadow), the
 * source id one that matches src-<64 hex>, and the result on the page's own origin (http, https
 * or file); anything else is refused, and so is a redirect. A page opened from disk (file://)
 * cannot fetch: there the record comes from sources/<source_id>/record.js beside record.json
 * (sites built with extra.evidence.offline), a script that hands over the same JSON text; see
 * register() below. Proofs are scripts on every site.
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
    // 4. The excerpt is exactly code points [start, end) of the text (whole-record verification
    // shows no excerpt: it checks the Merkle root instead, 5 below).
    const points = claim.points || new CodePoints(text);
    const quoted = claim.shown === null ? "" : points.slice(claim.start, claim.end);
    if (claim.shown === null) {
      // nothing shown
    } else if (quoted === null) {
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
    // 5. A stored Merkle root (records written with one) is the root of this text.
    if (claim.shown === null && record.merkle_root !== undefined) {
      const got = await merkleRootOf(points, options);
      if (got.root !== record.merkle_root || got.size !== record.merkle_size) {
        problems.push({
          check: "merkle_root",
          message:
            `merkle_root mismatch: expected ${record.merkle_root} (${record.merkle_size} chunks), ` +
            `got ${got.root} (${got.size})`,
        });
      }
    }
    return { ok: problems.length === 0, problems, notes };
  }

  // --------------------------------------------------------------------------------------------
  // Merkle trees and excerpt proofs (CONTRACT section 16): 1,024-code-point chunks, leaf
  // SHA-256(0x00 || UTF-8(chunk)), node SHA-256(0x01 || left || right), RFC 9162 shape.

  const LEAF = new Uint8Array([0]);
  const NODE = new Uint8Array([1]);
  const CHUNK_POINTS = 1024;

  /** SHA-256 of the concatenated byte arrays, as bytes (WebCrypto when available). */
  async function digestBytes(parts, options) {
    const subtle = options && options.fallback ? null : webCrypto();
    if (!subtle) {
      const h = new Sha256();
      for (const part of parts) h.update(part);
      return h.digest();
    }
    let n = 0;
    for (const p of parts) n += p.length;
    const data = new Uint8Array(n);
    let at = 0;
    for (const p of parts) {
      data.set(p, at);
      at += p.length;
    }
    return new Uint8Array(await subtle.digest("SHA-256", data));
  }

  function fromHex(hex) {
    if (typeof hex !== "string" || !/^[0-9a-f]{64}$/.test(hex)) return null;
    const out = new Uint8Array(32);
    for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
    return out;
  }

  /** The root a leaf and its inclusion path give (RFC 9162 section 2.1.3.2), or null. */
  async function rootFromPath(index, size, leaf, path, options) {
    if (!(Number.isSafeInteger(index) && Number.isSafeInteger(size) && index >= 0 && index < size)) return null;
    let fn = index;
    let sn = size - 1;
    let r = leaf;
    for (const hex of path) {
      const p = fromHex(hex);
      if (p === null || sn === 0) return null;
      if (fn % 2 === 1 || fn === sn) {
        r = await digestBytes([NODE, p, r], options);
        if (fn % 2 === 0) {
          while (fn % 2 === 0 && fn !== 0) {
            fn = Math.floor(fn / 2);
            sn = Math.floor(sn / 2);
          }
        }
      } else {
        r = await digestBytes([NODE, r, p], options);
      }
      fn = Math.floor(fn / 2);
      sn = Math.floor(sn / 2);
    }
    return sn === 0 ? r : null;
  }

  /** The Merkle root and chunk count of a whole text (whole-record verification). */
  async function merkleRootOf(points, options) {
    const stack = []; // [leaves, hash] of complete subtrees, largest first
    let size = 0;
    for (let at = 0; at < points.length; at += CHUNK_POINTS) {
      const chunk = points.slice(at, Math.min(points.length, at + CHUNK_POINTS));
      let node = [1, await digestBytes([LEAF, utf8.encode(chunk)], options)];
      size++;
      while (stack.length && stack[stack.length - 1][0] === node[0]) {
        const left = stack.pop();
        node = [node[0] * 2, await digestBytes([NODE, left[1], node[1]], options)];
      }
      stack.push(node);
    }
    if (!stack.length) return { root: "sha256:" + toHex(await digestBytes([], options)), size: 0 };
    let acc = stack[stack.length - 1][1];
    for (let i = stack.length - 2; i >= 0; i--) acc = await digestBytes([NODE, stack[i][1], acc], options);
    return { root: "sha256:" + toHex(acc), size };
  }

  function codePointLength(s) {
    let n = 0;
    for (const _ of s) n++;
    return n;
  }

  /**
   * Check one proof bundle (sources/<id>/proofs/<start>-<end>.js) against the claim of the page:
   * the proof's chunks and paths lead to its root, they cover exactly [start, end), and those
   * code points are the excerpt shown. Returns {ok, problems}.
   */
  async function verifyProof(bundle, claim, options) {
    const problems = [];
    const fail = (check, message) => problems.push({ check, message });
    const proof = bundle && bundle.proof;
    if (!proof || typeof proof !== "object" || !Array.isArray(proof.chunks) || !Array.isArray(proof.paths)) {
      fail("proof", "the proof file holds no proof");
      return { ok: false, problems };
    }
    if (proof.source_id !== claim.sourceId || proof.start !== claim.start || proof.end !== claim.end) {
      fail("proof", `the proof is of ${proof.source_id} [${proof.start}, ${proof.end}), not of this excerpt`);
      return { ok: false, problems };
    }
    const first = Math.floor(claim.start / CHUNK_POINTS);
    const last = Math.floor((claim.end - 1) / CHUNK_POINTS);
    const size = proof.tree_size;
    if (
      proof.chunk_size !== CHUNK_POINTS ||
      proof.first_chunk !== first ||
      proof.chunks.length !== last - first + 1 ||
      proof.paths.length !== proof.chunks.length ||
      !Number.isSafeInteger(size) ||
      last >= size ||
      typeof proof.merkle_root !== "string"
    ) {
      fail("proof", "the proof does not cover exactly this excerpt's chunks");
      return { ok: false, problems };
    }
    const want = proof.merkle_root.startsWith("sha256:") ? fromHex(proof.merkle_root.slice(7)) : null;
    for (let k = 0; k < proof.chunks.length; k++) {
      const chunk = proof.chunks[k];
      const index = first + k;
      const n = typeof chunk === "string" ? codePointLength(chunk) : -1;
      if (!(n === CHUNK_POINTS || (index === size - 1 && n > 0 && n < CHUNK_POINTS)) || !Array.isArray(proof.paths[k])) {
        fail("proof", `chunk ${index} is not a chunk of 1,024 code points`);
        continue;
      }
      const leaf = await digestBytes([LEAF, utf8.encode(chunk)], options);
      const got = await rootFromPath(index, size, leaf, proof.paths[k], options);
      if (got === null || want === null || toHex(got) !== toHex(want)) {
        fail("merkle_root", `chunk ${index} and its path do not lead to ${short(String(proof.merkle_root))}`);
      }
    }
    if (problems.length) return { ok: false, problems };
    const shown = new CodePoints(proof.chunks.join("")).slice(claim.start - first * CHUNK_POINTS, claim.end - first * CHUNK_POINTS);
    if (shown === null) {
      fail("range", `range [${claim.start}, ${claim.end}) lies past the end of the text`);
    } else if (shown !== claim.shown) {
      const index = firstDifference(shown, claim.shown);
      fail(
        "excerpt",
        `excerpt differs at code point ${index} (offset ${claim.start + index}): expected ` +
          `${describeChar(codePointAtIndex(shown, index))}, got ${describeChar(codePointAtIndex(claim.shown, index))}`,
      );
    }
    return { ok: problems.length === 0, problems };
  }

  function fromBase64(text) {
    const bin = atob(text);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  const ACQUISITIONS = ["fetch", "local_pdf"];

  /**
   * The signed root: an acquisition event of this snapshot that carries the proof's root and size
   * and the record's record_hash, signed (Ed25519, checked here with WebCrypto) by the key shipped
   * beside it, whose id is the SHA-256 of that key. Returns {keyId, eventId} or a reason string.
   */
  async function signedRoot(bundle, claim) {
    const subtle = webCrypto();
    const anchors = Array.isArray(bundle.anchors) ? bundle.anchors : [];
    const record = bundle.record;
    const proof = bundle.proof;
    if (!anchors.length) return "no acquisition event signs this snapshot's root";
    if (!subtle) return "this page cannot check signatures (no WebCrypto: not a secure context)";
    if (!record || record.source_id !== claim.sourceId) return "the record beside the proof is of another source";
    if (record.merkle_root !== undefined && (record.merkle_root !== proof.merkle_root || record.merkle_size !== proof.tree_size)) {
      return "the record's merkle_root is not the proof's";
    }
    let why = "no signature verifies";
    for (const anchor of anchors) {
      const event = anchor && anchor.event;
      if (!event || typeof event !== "object" || !event.sig || typeof anchor.key !== "string") continue;
      if (event.source_id !== claim.sourceId || !ACQUISITIONS.includes(event.type)) continue;
      if (event.merkle_root !== proof.merkle_root || event.merkle_size !== proof.tree_size) continue;
      if (event.record_hash !== record.record_hash) continue;
      try {
        const raw = fromBase64(anchor.key);
        const keyId = toHex(await digestBytes([raw]));
        if (event.sig.alg !== "ed25519" || keyId !== event.sig.key_id) continue;
        const payload = { ...event, sig: { alg: event.sig.alg, key_id: event.sig.key_id, run: event.sig.run } };
        const key = await subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]);
        const ok = await subtle.verify({ name: "Ed25519" }, key, fromBase64(event.sig.value), utf8.encode(canonicalJson(payload)));
        if (ok) return { keyId, eventId: event.event_id };
      } catch (err) {
        why = `a signature could not be checked (${err.message})`;
      }
    }
    return why;
  }

  // --------------------------------------------------------------------------------------------
  // The document, reached only through the DOM's own prototypes. Prose on a page may hold
  // elements whose name or id shadows a property of `document` (<img name="currentScript">,
  // <form name="querySelectorAll">) or an undeclared global (<div id="__config">): nothing here
  // reads such a property. Methods and getters are taken from Document.prototype and
  // Element.prototype once, while this script runs, and called on `document`, which (like
  // `location`) no element can shadow.

  const DOC = Document.prototype;
  const ELEMENT = Element.prototype;
  const docQueryAll = DOC.querySelectorAll;
  const elQueryAll = ELEMENT.querySelectorAll;
  const docCreate = DOC.createElement;
  const headGetter = Object.getOwnPropertyDescriptor(DOC, "head").get;
  const stateGetter = Object.getOwnPropertyDescriptor(DOC, "readyState").get;
  const scriptSrc = Object.getOwnPropertyDescriptor(HTMLScriptElement.prototype, "src").get;
  const listen = EventTarget.prototype.addEventListener;

  function queryAll(root, selector) {
    return Array.from((root === document ? docQueryAll : elQueryAll).call(root, selector));
  }

  function appendToHead(element) {
    Node.prototype.appendChild.call(headGetter.call(document), element);
  }

  // --------------------------------------------------------------------------------------------
  // Fetching records and proofs: once per URL and page view; a parsed record keeps its index.

  const SCRIPT_PATH = "assets/publisher/verify.js";
  const SCHEMES = ["http:", "https:", "file:"];
  const records = new Map();

  function sameOrigin(url) {
    const here = new URL(location.href);
    return url.protocol === here.protocol && url.origin === here.origin && url.host === here.host;
  }

  /**
   * Where this script was loaded from, found while it runs among the page's <script> elements
   * (which prose cannot add, and the page's policy would not run): the one same-origin script
   * whose path ends in assets/publisher/verify.js. Never document.currentScript, which prose
   * could shadow. Several candidates that disagree, or none, leave it unknown.
   */
  function ownScript() {
    const found = new Set();
    for (const el of queryAll(document, "script[src]")) {
      let url;
      try {
        url = new URL(scriptSrc.call(el));
      } catch (err) {
        continue;
      }
      if (url.pathname.endsWith("/" + SCRIPT_PATH)) found.add(url.href);
    }
    return found.size === 1 ? Array.from(found)[0] : "";
  }

  const SCRIPT_URL = ownScript();

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

  // Pages opened from disk cannot fetch. Records (sources/<id>/record.js, on sites built with
  // extra.evidence.offline) and proofs (sources/<id>/proofs/<start>-<end>.js, on every site) are
  // therefore also published as scripts that hand their JSON text to register() or proof(). A
  // script is loaded only from its own address, by a <script> element made here; a hand-over is
  // accepted only for a load this page is waiting for (the source id, or the source id and span
  // its JSON names), once. The page's policy runs no script the site did not ship, and what is
  // handed over is checked exactly like a fetched file: a script cannot make anything verify.
  const waiting = new Map(); // key -> resolve

  function handOver(key, value) {
    const resolve = waiting.get(key);
    if (!resolve) return false;
    waiting.delete(key);
    resolve(value);
    return true;
  }

  function register(sourceId, text) {
    if (typeof sourceId !== "string" || typeof text !== "string") return false;
    return handOver(`record ${sourceId}`, text);
  }

  function proof(text) {
    if (typeof text !== "string") return false;
    let bundle;
    try {
      bundle = JSON.parse(text);
    } catch (err) {
      return false;
    }
    const p = bundle && bundle.proof;
    if (!p || typeof p !== "object") return false;
    return handOver(`proof ${p.source_id} ${p.start}-${p.end}`, bundle);
  }

  function loadScript(url, key, what) {
    let hit = records.get(url);
    if (!hit) {
      hit = new Promise((resolve, reject) => {
        waiting.set(key, resolve);
        const script = docCreate.call(document, "script");
        script.src = url;
        script.onload = () => {
          if (waiting.delete(key)) reject(new Error(`${url} did not hand over the ${what}`));
          script.remove();
        };
        script.onerror = () => {
          waiting.delete(key);
          script.remove();
          reject(new Error(`could not load ${url}`));
        };
        appendToHead(script);
      });
      records.set(url, hit);
      hit.catch(() => records.delete(url));
    }
    return hit;
  }

  function loadRecordScript(sourceId) {
    return loadScript(recordUrl(sourceId, "record.js"), `record ${sourceId}`, "record").then(parseRecordText, (err) => {
      throw new Error(`${err.message} (this site was not built with extra.evidence.offline)`);
    });
  }

  function loadProof(sourceId, start, end) {
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) throw new Error("not a span");
    const url = recordUrl(sourceId, `proofs/${start}-${end}.js`);
    return loadScript(url, `proof ${sourceId} ${start}-${end}`, "proof");
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

  function loadWholeRecord(sourceId) {
    return location.protocol === "file:" ? loadRecordScript(sourceId) : loadRecord(recordUrl(sourceId));
  }

  // --------------------------------------------------------------------------------------------
  // The page: find excerpts and highlights, add a button beside each, verify on click.

  // A whole snapshot text, or one context window of it (extra.evidence.source_text: windows).
  const SNAPSHOT = "pre.evidence-snapshot[data-source-id], pre.evidence-window[data-window-of]";

  /** Marks of span "s-e" inside a snapshot block, in document order, with their joined text. */
  function highlightOf(block, start, end) {
    const token = `${start}-${end}`;
    const marks = queryAll(block, "mark.evidence-span").filter((m) =>
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
    if (kind === "record") {
      shown = null;
    } else if (kind === "highlight") {
      const block = button.closest(SNAPSHOT);
      const found = highlightOf(block, start, end);
      shown = found.shown;
      contiguous = found.contiguous;
    } else {
      const excerpt = EXCERPTS.get(button);
      shown = excerpt ? excerpt.textContent : "";
      contiguous = !!excerpt;
    }
    return { sourceId, start, end, shown, contiguous, kind };
  }

  function setState(button, state, label, detail, anchor) {
    button.setAttribute("data-state", state);
    button.setAttribute("data-label", label);
    button.setAttribute("aria-label", label);
    button.title = detail || label;
    button.setAttribute("data-detail", detail || label);
    if (anchor) button.setAttribute("data-anchor", anchor);
    else button.removeAttribute("data-anchor");
    button.removeAttribute("data-problems");
  }

  /** A mismatch: the first problem as the label, all of them as the detail, and their facts (each
   * problem without its message: check, expected, got, index) as JSON in data-problems, for programs. */
  function refuse(button, problems) {
    const first = problems[0];
    setState(button, "mismatch", `✗ ${first.check}: ${first.message}`, problems.map((p) => p.message).join("\n"));
    const facts = problems.map((p) => Object.fromEntries(Object.entries(p).filter(([key]) => key !== "message")));
    button.setAttribute("data-problems", JSON.stringify(facts));
  }

  /**
   * Verify one excerpt. First its proof: the covering chunks and their paths lead to the root,
   * and the root is anchored by a signed acquisition event — a few kilobytes whatever the size
   * of the source ("a signed root"). Without a signed root, the whole published record anchors
   * it ("the full text"); a source published without its text has no other anchor.
   */
  async function verifyButton(button, supplied) {
    const claim = claimOf(button);
    if (!SOURCE_ID.test(claim.sourceId)) {
      setState(button, "mismatch", `not a source id: ${claim.sourceId}`);
      return;
    }
    setState(button, "working", "verifying…");
    const how = webCrypto() ? "WebCrypto" : "built-in SHA-256";
    let unanchored = "";
    try {
      if (!supplied && claim.kind !== "record") {
        let bundle = null;
        try {
          bundle = await loadProof(claim.sourceId, claim.start, claim.end);
        } catch (err) {
          unanchored = err.message;
        }
        if (bundle) {
          const result = await verifyProof(bundle, claim);
          if (!claim.contiguous) result.problems.push({ check: "highlight", message: "the highlight is not one contiguous range" });
          if (result.problems.length) return refuse(button, result.problems);
          const signed = await signedRoot(bundle, claim);
          if (typeof signed === "object") {
            const detail =
              `Verified in this browser (${how}) against a signed root: code points [${claim.start}, ${claim.end}) ` +
              `of ${claim.sourceId} are the excerpt shown; their chunks lead to ${bundle.proof.merkle_root}, ` +
              `which acquisition event ${signed.eventId} signs (Ed25519, key ${short(signed.keyId)}) with record_hash ` +
              `${short(String(bundle.record.record_hash))}. Anchor: a signed root.`;
            return setState(button, "verified", "✓ verified", detail, "signed-root");
          }
          unanchored = signed;
        }
      }
      const entry = supplied || (await loadWholeRecord(claim.sourceId));
      if (entry.record && typeof entry.record === "object" && entry.record.text === undefined) {
        return refuse(button, [
          {
            check: "anchor",
            message:
              `this source is published without its text, and nothing anchors its root here (${unanchored || "no proof"})`,
          },
        ]);
      }
      claim.points = entry.points;
      const progress = (f) => setState(button, "working", `verifying… ${Math.floor(f * 100)}%`);
      const result = await verifyRecord(entry.record, claim, { progress });
      if (!claim.contiguous) {
        result.ok = false;
        result.problems.push({ check: "highlight", message: "the highlight is not one contiguous range" });
      }
      if (!result.ok) return refuse(button, result.problems);
      const what =
        claim.kind === "record"
          ? "merkle_root matches (when the record has one); the whole record verifies."
          : `code points [${claim.start}, ${claim.end}) are exactly the excerpt shown.`;
      const detail =
        `Verified in this browser (${how}) against the full text: SHA-256(url ‖ 0x00 ‖ text) = ${claim.sourceId}; ` +
        `content_hash matches; record_hash matches; ${what} Anchor: the full text.`;
      setState(button, "verified", "✓ verified", detail, "full-text");
    } catch (err) {
      setState(button, "error", `✗ ${err.message}`);
      if (location.protocol === "file:") offerFile(button);
    }
  }

  /** A page opened from disk whose site has no record.js: let the reader pick record.json themselves. */
  function offerFile(button) {
    if (button.nextElementSibling && button.nextElementSibling.classList.contains("evidence-verify-file")) return;
    const input = docCreate.call(document, "input");
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
    const button = docCreate.call(document, "button");
    button.type = "button";
    button.className = "evidence-verify";
    button.setAttribute("data-source-id", sourceId);
    button.setAttribute("data-start", String(start));
    button.setAttribute("data-end", String(end));
    button.setAttribute("data-kind", kind);
    button.setAttribute("data-evidence-control", "");
    // The label is drawn by CSS (attr(data-label)), so the text of a snapshot stays exactly the
    // snapshot: selecting and copying it never picks up a button label.
    const what =
      kind === "record"
        ? `Check in this browser the whole published record of ${sourceId} (every digest, over the whole text)`
        : `Check in this browser that this excerpt is exactly code points [${start}, ${end}) of ${sourceId}`;
    setState(button, "idle", kind === "record" ? "verify the whole record" : "verify", what);
    return button;
  }

  const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
  const DIGIT = /\p{Nd}/u;

  // How many code units at the start of ``text`` continue the word or number that ``before``
  // (the last character shown before it) ends: letters, digits and marks, and a "." or ","
  // between two digits (6.2, 1,024).
  function wordTail(text, before) {
    let at = 0;
    let prev = before;
    const chars = Array.from(text);
    for (let i = 0; i < chars.length; i++) {
      const ch = chars[i];
      const joins = (ch === "." || ch === ",") && DIGIT.test(prev) && DIGIT.test(chars[i + 1] || "");
      if (!WORD_CHAR.test(ch) && !joins) break;
      at += ch.length;
      prev = ch;
    }
    return at;
  }

  // Put ``control`` right after ``node``, or, where a word or number runs on past it in the text
  // that follows, after the end of that word: a control never splits "randomised" or "0.003".
  function placeAfterWord(node, control) {
    const shown = Array.from(node.textContent || "");
    const last = shown.length ? shown[shown.length - 1] : "";
    const next = node.nextSibling;
    if (!WORD_CHAR.test(last) || !next || next.nodeType !== Node.TEXT_NODE) {
      node.after(control);
      return;
    }
    const tail = wordTail(next.data, last);
    if (tail === 0) {
      node.after(control);
    } else if (tail >= next.data.length) {
      next.after(control);
    } else {
      next.splitText(tail);
      next.after(control);
    }
  }

  function scan(root) {
    const scope = root || document;
    // Footnote and report excerpts: elements carrying the three data attributes.
    for (const el of queryAll(scope, "[data-source-id][data-start][data-end]")) {
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
      // After the excerpt's link, past the rest of its sentence: never inside a word or a number.
      let next = el.nextElementSibling;
      if (next && next.classList.contains("evidence-context")) next = next.nextElementSibling;
      const link = next && next.classList.contains("evidence-link") ? next : null;
      if (link) link.after(button);
      else placeAfterWord(el, button);
    }
    // Highlights of a snapshot text: one button after the last segment of each cited span.
    const wholes = new Map(); // source id -> the first block of its text on this page
    for (const block of queryAll(scope, SNAPSHOT)) {
      if (block.hasAttribute("data-verify-ready")) continue;
      block.setAttribute("data-verify-ready", "");
      const sourceId = block.getAttribute("data-source-id") || block.getAttribute("data-window-of");
      if (!wholes.has(sourceId)) wholes.set(sourceId, block.closest(".evidence-windows") || block);
      const last = new Map();
      for (const mark of queryAll(block, "mark.evidence-span")) {
        for (const token of (mark.getAttribute("data-spans") || "").split(/\s+/)) {
          if (/^\d+-\d+$/.test(token)) last.set(token, mark);
        }
      }
      for (const [token, mark] of last) {
        const [start, end] = token.split("-").map(Number);
        placeAfterWord(mark, makeButton(sourceId, start, end, "highlight"));
      }
    }
    // Whole-record verification, an explicit action: one button before each source's text.
    for (const [sourceId, first] of wholes) {
      if (SOURCE_ID.test(sourceId || "")) first.before(makeButton(sourceId, 0, 0, "record"));
    }
  }

  listen.call(document, "click", (event) => {
    const button = event.target instanceof Element ? event.target.closest("button.evidence-verify") : null;
    if (!button) return;
    event.preventDefault();
    verifyButton(button);
  });

  /** Outline every segment of the span the address names (#span-<start>-<end>), not only the first. */
  function markCurrent() {
    for (const el of queryAll(document, "mark.evidence-current")) el.classList.remove("evidence-current");
    const match = /^#span-(\d+)-(\d+)$/.exec(location.hash);
    if (!match) return;
    for (const block of queryAll(document, SNAPSHOT)) {
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

  // Scanning is idempotent; Material's document$ also announces pages loaded by instant navigation
  // (read only when it is the theme's observable, never an element that took its name).
  if (stateGetter.call(document) === "loading") listen.call(document, "DOMContentLoaded", start);
  else start();
  const announced = Object.getOwnPropertyDescriptor(globalThis, "document$");
  const pages = announced && "value" in announced ? announced.value : undefined;
  if (pages && !(pages instanceof Node) && typeof pages.subscribe === "function") pages.subscribe(start);

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
    verifyProof,
    merkleRootOf,
    rootFromPath,
    register,
    proof,
    scan,
  });
})();
