function t = rounds_ms(calls, reps)
% ROUNDS_MS  Median time in milliseconds of each calls{k}() over reps rounds after a warm-up round, each round
% calling every one once in turn (the machine's memory may change pace within seconds; rounds keep the calls'
% ratios within one state). The examples' timer of several calls, beside median_ms for one.
  times = zeros(numel(calls), reps + 1);
  for r = 1:reps + 1
    for k = 1:numel(calls)
      t0 = tic; calls{k}(); times(k, r) = toc(t0) * 1000;
    end
  end
  t = median(times(:, 2:end), 2);
end
