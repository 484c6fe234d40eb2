import { useState, type FormEvent } from 'react';
import { toast } from '../activity/toasts.ts';
import { CopyButton, Empty, Identicon } from '../components/common.tsx';
import { ConfirmDialog } from '../components/ConfirmDialog.tsx';
import { contacts, parseAddressInput, type Contact } from '../settings.ts';

const byName = (x: Contact, y: Contact) => x.name.localeCompare(y.name);

/**
 * Deletes a contact and offers Undo for a few seconds: putting it back is cheap, and it returns
 * unless the person has meanwhile saved another contact under the same address.
 */
function deleteContact(c: Contact): void {
  contacts.set((list) => list.filter((x) => x.address !== c.address));
  toast({
    tone: 'info',
    text: `Deleted ${c.name} from the address book.`,
    timeoutMs: 8000,
    action: {
      label: 'Undo',
      run: () =>
        contacts.set((list) =>
          list.some((x) => x.address === c.address) ? list : [...list, c].sort(byName),
        ),
    },
  });
}

/** The address book: names for addresses, kept in this browser; the send form offers them. */
export function ContactsPage() {
  const book = contacts.use();
  const [name, setName] = useState('');
  const [address, setAddress] = useState('');
  const [editing, setEditing] = useState<string>();
  const [errors, setErrors] = useState<{ name?: string; address?: string }>({});
  const [deleting, setDeleting] = useState<Contact>();

  const save = (e: FormEvent) => {
    e.preventDefault();
    const errs: { name?: string; address?: string } = {};
    const n = name.trim();
    if (n === '') errs.name = 'Give the contact a name.';
    else if (n.length > 40) errs.name = 'A name has at most 40 characters.';
    const a = parseAddressInput(address);
    if ('error' in a) errs.address = a.error;
    else if (book.some((c) => c.address === a.address && c.address !== editing)) {
      errs.address = `This address is already in the book as "${book.find((c) => c.address === a.address)?.name}".`;
    }
    setErrors(errs);
    if (errs.name || errs.address || 'error' in a) return;
    const entry: Contact = { name: n, address: a.address };
    contacts.set((list) =>
      [...list.filter((c) => c.address !== editing && c.address !== entry.address), entry].sort(byName),
    );
    setName('');
    setAddress('');
    setEditing(undefined);
  };

  return (
    <div className="page" data-testid="contacts-page">
      <h1>Address book</h1>
      <form className="card" onSubmit={save} noValidate data-testid="contact-form">
        <h2>{editing ? 'Edit contact' : 'Add a contact'}</h2>
        <div className="row" style={{ alignItems: 'flex-start' }}>
          <label className="field" style={{ width: 200 }}>
            <span>Name</span>
            <input
              value={name}
              maxLength={40}
              onChange={(e) => setName(e.target.value)}
              aria-invalid={errors.name !== undefined}
              data-testid="contact-name"
            />
            {errors.name && <span className="field-error">{errors.name}</span>}
          </label>
          <label className="field" style={{ flex: 1, minWidth: 300 }}>
            <span>Address</span>
            <input
              className="mono"
              value={address}
              spellCheck={false}
              onChange={(e) => setAddress(e.target.value)}
              aria-invalid={errors.address !== undefined}
              data-testid="contact-address"
            />
            {errors.address && (
              <span className="field-error" data-testid="contact-address-error">
                {errors.address}
              </span>
            )}
          </label>
        </div>
        <div className="row">
          <button type="submit" className="primary" data-testid="contact-save">
            {editing ? 'Save' : 'Add'}
          </button>
          {editing && (
            <button
              type="button"
              onClick={() => {
                setEditing(undefined);
                setName('');
                setAddress('');
                setErrors({});
              }}
            >
              Cancel
            </button>
          )}
        </div>
      </form>
      <div className="card">
        {book.length === 0 ? (
          <Empty>No contacts yet.</Empty>
        ) : (
          <table>
            <tbody>
              {book.map((c) => (
                <tr key={c.address} data-testid="contact-row">
                  <td style={{ width: 36 }}>
                    <Identicon address={c.address} size={24} />
                  </td>
                  <td>
                    <b>{c.name}</b>
                  </td>
                  <td className="mono small">{c.address}</td>
                  <td className="num">
                    <div className="row" style={{ justifyContent: 'flex-end', flexWrap: 'nowrap' }}>
                      <CopyButton text={c.address} />
                      <button
                        type="button"
                        onClick={() => {
                          setEditing(c.address);
                          setName(c.name);
                          setAddress(c.address);
                          setErrors({});
                        }}
                      >
                        Edit
                      </button>
                      <button
                        type="button"
                        className="danger"
                        onClick={() => setDeleting(c)}
                        aria-label={`Delete ${c.name}`}
                        data-testid="contact-delete"
                      >
                        Delete
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      <ConfirmDialog
        open={deleting !== undefined}
        title={`Delete ${deleting?.name ?? ''}?`}
        confirmLabel="Delete contact"
        onCancel={() => setDeleting(undefined)}
        onConfirm={() => {
          if (deleting) deleteContact(deleting);
          setDeleting(undefined);
        }}
        testId="contact-delete-dialog"
      >
        <p>
          The name goes from the address book. The account itself and its funds are not touched; you can add
          the address again at any time.
        </p>
        <p className="mono small">{deleting?.address}</p>
      </ConfirmDialog>
    </div>
  );
}
