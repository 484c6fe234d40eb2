import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { initApi } from './api.ts';
import { App } from './App.tsx';
import { applyTheme, settings } from './settings.ts';

/** Entry point: theme first (no flash), then the API address, then the app. */
applyTheme(settings.get().theme);

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

initApi().then(
  () =>
    root.render(
      <StrictMode>
        <QueryClientProvider client={queryClient}>
          <App />
        </QueryClientProvider>
      </StrictMode>,
    ),
  (e: unknown) =>
    root.render(
      <div className="centered card error" role="alert">
        {e instanceof Error ? e.message : String(e)}
      </div>,
    ),
);
