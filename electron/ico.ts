/**
 * A Windows icon file (.ico) holding PNG images, the form every browser and Windows since Vista
 * read: a 6-byte header, one 16-byte entry per image (its size, 32 bits a pixel, its length and
 * offset), then the PNGs as they are. Used by scripts/gen-icons.ts for renderer/public/favicon.ico.
 */
export interface IcoImage {
  /** Width and height in pixels (square), 1 to 256. */
  size: number;
  png: Uint8Array;
}

export function encodeIco(images: readonly IcoImage[]): Buffer {
  if (images.length === 0 || images.length > 0xffff) throw new RangeError('an icon holds 1 to 65535 images');
  const header = Buffer.alloc(6 + 16 * images.length);
  header.writeUInt16LE(0, 0); // reserved
  header.writeUInt16LE(1, 2); // 1: icon (2 would be a cursor)
  header.writeUInt16LE(images.length, 4);
  let offset = header.length;
  images.forEach((img, i) => {
    if (!Number.isInteger(img.size) || img.size < 1 || img.size > 256)
      throw new RangeError(`icon size ${img.size} is not 1 to 256`);
    const e = 6 + 16 * i;
    header.writeUInt8(img.size === 256 ? 0 : img.size, e); // 0 means 256
    header.writeUInt8(img.size === 256 ? 0 : img.size, e + 1);
    header.writeUInt8(0, e + 2); // no palette
    header.writeUInt8(0, e + 3);
    header.writeUInt16LE(1, e + 4); // colour planes
    header.writeUInt16LE(32, e + 6); // bits a pixel
    header.writeUInt32LE(img.png.length, e + 8);
    header.writeUInt32LE(offset, e + 12);
    offset += img.png.length;
  });
  return Buffer.concat([header, ...images.map((i) => i.png)]);
}
