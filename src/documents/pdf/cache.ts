/**
 * Rendered PDFs by key, least recently used first out, bounded by their total bytes: a PDF is
 * rendered once per state of its invoice however often it is fetched. A PDF larger than the whole
 * bound is not kept.
 */
export class PdfCache {
  // A Map iterates in insertion order: a hit is moved to the end, the first entry is the coldest.
  private readonly entries = new Map<string, Buffer>();
  private total = 0;
  hits = 0;
  misses = 0;

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): Buffer | undefined {
    const pdf = this.entries.get(key);
    if (!pdf) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.entries.delete(key);
    this.entries.set(key, pdf);
    return pdf;
  }

  set(key: string, pdf: Buffer): void {
    this.delete(key);
    // Counted by the memory it holds: a view of a larger buffer is copied to its own.
    const own =
      pdf.byteOffset === 0 && pdf.buffer.byteLength === pdf.byteLength
        ? pdf
        : Buffer.from(new Uint8Array(pdf).buffer);
    if (own.byteLength > this.maxBytes) return;
    this.entries.set(key, own);
    this.total += own.byteLength;
    for (const [coldest, old] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(coldest);
      this.total -= old.byteLength;
    }
  }

  delete(key: string): void {
    const old = this.entries.get(key);
    if (!old) return;
    this.entries.delete(key);
    this.total -= old.byteLength;
  }
}
