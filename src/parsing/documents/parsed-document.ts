/** The file cannot become text (unsupported, damaged, binary, empty): that document fails, saying why. */
export class DocumentParseError extends Error {
  override name = 'DocumentParseError';
}

/** A parsed file: its text, and for PDFs the text of each page (so chunks know their page). */
export interface ParsedDocument {
  text: string;
  pages: string[] | null;
}
