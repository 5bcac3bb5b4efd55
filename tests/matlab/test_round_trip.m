function test_round_trip()
%TEST_ROUND_TRIP  maxpool -> maxunpool puts each maximum back where it was and zeros elsewhere; the same with
% compact indices, across DataFormats and with padding.
randn('seed', 1);
cfg = {{[6 8 3 2], 'SSCB', {2, 'Stride', 2}}, {[3 7 5 2], 'CSSB', {[3 2], 'Stride', [2 2], 'Padding', 1}}, ...
       {[2 9 4 3], 'BSSC', {3, 'Stride', 3, 'Padding', 'same'}}, {[10 3 2], 'SCB', {4, 'Stride', 4}}};
for k = 1:numel(cfg)
  [sz, fmt, a] = cfg{k}{:};
  X = randn(sz);
  [Y, I, s] = poolkit.maxpool(X, a{:}, 'DataFormat', fmt);
  Z = poolkit.maxunpool(Y, I, s);
  check(isequal(size(Z), size(X)), '%s: size', fmt);
  check(isequal(Z(I), Y) && isequal(X(I), Y), '%s: maxima not back in place', fmt);
  mask = true(size(Z)); mask(I) = false;
  check(all(Z(mask) == 0), '%s: cells outside indx are not zero', fmt);
  [~, Ic, info] = poolkit.maxpool(X, a{:}, 'DataFormat', fmt, 'Indices', 'compact');
  check(isequal(poolkit.maxunpool(Y, Ic, info), Z), '%s: compact round trip', fmt);
end
end
