import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { APP_HEADERS, appFetch, initApi } from './api.ts';
import { App } from './App.tsx';
import { Connect } from './pages/Connect.tsx';
import { applyTheme, settings } from './settings.ts';
import { openWindowStore } from './window-store/index.ts';
import { SaveNotice } from './window-store/SaveNotice.tsx';
import { CONNECT_ROUTE, connectFromLink, type SessionApi, sessionStatus } from './window-store/session.ts';

/**
 * Entry point: the API address, the window's session with the node (or the Connect screen), the
 * window's documents from the node (wallet, settings, contacts), the theme, then the app.
 */
const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      retry: 1,
      staleTime: 2000,
      refetchOnWindowFocus: true,
    },
  },
});

const root = createRoot(document.getElementById('root')!);

// A connect link pasted into this tab changes only the hash: start again to take it.
window.addEventListener('hashchange', () => {
  if (window.location.hash.startsWith(CONNECT_ROUTE)) window.location.reload();
});

async function boot(): Promise<void> {
  const client = await initApi();
  const session: SessionApi = { base: client.baseUrl, fetch: appFetch, headers: APP_HEADERS };
  const linkError = await connectFromLink(session);
  const status = await sessionStatus(session);
  if (!status.authenticated) {
    root.render(
      <StrictMode>
        <Connect session={session} adminTokenFile={status.adminTokenFile} linkError={linkError} />
      </StrictMode>,
    );
    return;
  }
  await openWindowStore(session.base, appFetch, APP_HEADERS);
  applyTheme(settings.get().theme);
  root.render(
    <StrictMode>
      <QueryClientProvider client={queryClient}>
        <App />
        <SaveNotice />
      </QueryClientProvider>
    </StrictMode>,
  );
}

boot().catch((e: unknown) =>
  root.render(
    <div className="centered card error" role="alert">
      {e instanceof Error ? e.message : String(e)}
    </div>,
  ),
);
