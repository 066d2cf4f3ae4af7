/** What a reader of a file's content uses of it: reads at a position (null: where the last read ended). */
export interface ReadAt {
  read(buffer: Buffer, offset: number, length: number, position: number | null): Promise<{ readonly bytesRead: number }>;
}
