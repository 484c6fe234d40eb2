import { useEffect, useState } from 'react';
import QRCode from 'qrcode';

/** An address as a QR code (a data: URL image), loaded lazily with the qrcode package. */
export default function AddressQr({ text }: { text: string }) {
  const [url, setUrl] = useState<string>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    let live = true;
    QRCode.toDataURL(text, { errorCorrectionLevel: 'M', margin: 2, width: 360 }).then(
      (u) => live && setUrl(u),
      (e: unknown) => live && setError(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      live = false;
    };
  }, [text]);
  if (error) return <div className="error">QR code unavailable: {error}</div>;
  if (!url) return <div className="qr" role="img" aria-label="QR code loading" />;
  return <img className="qr" src={url} alt={`QR code of ${text}`} data-testid="address-qr" />;
}
