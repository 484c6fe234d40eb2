import { useId, useState } from 'react';
import { ErrorText, Loading } from '../components/common.tsx';
import { type Box, pointsOf, shapesOf, summaryOf } from './chart.ts';
import { durationWords } from './format.ts';
import { useActivity } from './queries.ts';

/**
 * Blocks per minute (bars) and peers (a step line) over time, drawn as inline SVG from the node's
 * own samples. The caption says the gist in words and the same numbers are one click away as a
 * table, for people who do not see the chart.
 */
const W = 640;
const H = 180;
const BOX: Box = { left: 40, top: 12, width: W - 80, height: H - 40 };

export function ActivityChart() {
  const activity = useActivity();
  const [range, setRange] = useState<'fine' | 'minutes'>('fine');
  const captionId = useId();
  if (activity.isLoading) return <Loading what="Reading the activity" />;
  if (!activity.data) return <ErrorText error={activity.error} />;
  const series = activity.data[range];
  const points = pointsOf(series);
  const shapes = shapesOf(points, BOX);
  const span = `the last ${durationWords((series.capacity * series.interval_ms) / 1000)}, a bar every ${durationWords(series.interval_ms / 1000)}`;
  const first = points[0];
  const bottom = BOX.top + BOX.height;
  return (
    <div data-testid="activity">
      <div className="row" role="group" aria-label="Time range">
        <button
          type="button"
          aria-pressed={range === 'fine'}
          className={range === 'fine' ? 'primary' : ''}
          onClick={() => setRange('fine')}
          data-testid="activity-range-fine"
        >
          10 minutes
        </button>
        <button
          type="button"
          aria-pressed={range === 'minutes'}
          className={range === 'minutes' ? 'primary' : ''}
          onClick={() => setRange('minutes')}
          data-testid="activity-range-minutes"
        >
          24 hours
        </button>
      </div>
      <figure className="chart">
        <svg
          viewBox={`0 0 ${W} ${H}`}
          role="img"
          aria-labelledby={captionId}
          data-testid="activity-chart"
          data-points={points.length}
        >
          <line className="chart-axis" x1={BOX.left} y1={bottom} x2={BOX.left + BOX.width} y2={bottom} />
          <line className="chart-grid" x1={BOX.left} y1={BOX.top} x2={BOX.left + BOX.width} y2={BOX.top} />
          <text className="chart-label" x={BOX.left - 6} y={BOX.top + 4} textAnchor="end">
            {shapes.blocksMax}
          </text>
          <text className="chart-label" x={BOX.left - 6} y={bottom} textAnchor="end">
            0
          </text>
          <text className="chart-label peers" x={BOX.left + BOX.width + 6} y={BOX.top + 4}>
            {shapes.peersMax}
          </text>
          <text className="chart-label peers" x={BOX.left + BOX.width + 6} y={bottom}>
            0
          </text>
          {shapes.bars.map((b, i) => (
            <rect
              key={i}
              className="chart-bar"
              x={b.x}
              y={b.y}
              width={b.width}
              height={b.height}
              data-testid="activity-bar"
            />
          ))}
          {shapes.peerPath && <path className="chart-peers" d={shapes.peerPath} />}
          {first && (
            <text className="chart-label" x={BOX.left} y={H - 6}>
              {new Date(Number(first.at / 1_000_000n)).toLocaleTimeString()}
            </text>
          )}
          <text className="chart-label" x={BOX.left + BOX.width} y={H - 6} textAnchor="end">
            now
          </text>
        </svg>
        <figcaption id={captionId} data-testid="activity-caption">
          <span className="legend bar" aria-hidden="true" /> Blocks per minute (left scale) and{' '}
          <span className="legend line" aria-hidden="true" /> peers (right scale) over {span}.{' '}
          {summaryOf(points, series.interval_ms)}
        </figcaption>
      </figure>
      <details className="details">
        <summary data-testid="activity-table-toggle">Show the numbers as a table</summary>
        <div className="table-scroll short" tabIndex={0} role="region" aria-label="Activity samples">
          <table data-testid="activity-table">
            <thead>
              <tr>
                <th>Time</th>
                <th className="num">New blocks</th>
                <th className="num">Blocks per minute</th>
                <th className="num">Peers</th>
              </tr>
            </thead>
            <tbody>
              {[...points].reverse().map((p) => (
                <tr key={p.at.toString()}>
                  <td className="small">{new Date(Number(p.at / 1_000_000n)).toLocaleTimeString()}</td>
                  <td className="num">{p.newBlocks}</td>
                  <td className="num">{p.blocksPerMinute}</td>
                  <td className="num">{p.peers}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </div>
  );
}
