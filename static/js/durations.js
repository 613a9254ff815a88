// A duration for people, as leaderboard/lib/durations.py writes it: "45 s", "2 min", "1 min 30 s", "1 h 30 min".
// Loaded by every page before its own scripts (scaling.js, job_live.js, run_live.js use it).
window.medalboardDuration = function (seconds) {
  "use strict";
  if (seconds === null || seconds === undefined || !isFinite(seconds) || seconds < 0) return "–";
  if (seconds < 1) return Number(seconds.toPrecision(3)) + " s";
  const pair = (big, bigUnit, small, smallUnit) => big + " " + bigUnit + (small ? " " + small + " " + smallUnit : "");
  const whole = Math.round(seconds); // rounded first: 59.6 s is "1 min", 3599.6 s is "1 h"
  if (whole < 60) return whole + " s";
  if (whole < 3600) return pair(Math.floor(whole / 60), "min", whole % 60, "s");
  const minutes = Math.round(seconds / 60);
  return pair(Math.floor(minutes / 60), "h", minutes % 60, "min");
};
