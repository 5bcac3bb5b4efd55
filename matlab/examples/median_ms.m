function t = median_ms(f, reps)
% MEDIAN_MS  Median time of reps calls of f(), in milliseconds, after one warm-up call (the examples' timer).
  f();
  t = zeros(1, reps);
  for r = 1:reps
    t0 = tic; f(); t(r) = toc(t0);
  end
  t = median(t) * 1000;
end
