function test_linear_slabs()
%TEST_LINEAR_SLABS  The scatters of linear indices (maxunpool: Z(indx) = X; maxpool_backward: dX(indx) += dY)
% first try the output's batches as slabs, each applied by one thread, and fall back to the ordered scatter when
% an index leaves its batch. Every case against Octave's own indexing (Z(indx) = X; dX(indx(i)) += dY(i) in
% order, in the class of dY): indices from maxpool
% (each stays in its batch; overlapping windows repeat indices within a batch), all pointing into the first
% batch, a permutation of the batches, one index of the last batch pointing into the first, and an invalid
% entry in a later batch than another (the first is reported).
randn('seed', 5);
sz = [7 6 3 6];  % 'SSCB', 6 batches
o = {'Stride', 2, 'DataFormat', 'SSCB'};
for cls = {'double', 'single'}
  X = cast(randn(sz), cls{1});
  [Y, I, s] = poolkit.maxpool(X, 3, o{:});  % 3x3 windows, stride 2: some cells are the maximum of two windows
  slab = prod(sz(1:3));
  B = sz(4);
  b = reshape(repmat(1:B, numel(Y) / B, 1), size(Y));  % the batch of each entry of Y
  cases = {
    'from maxpool (repeats within batches)', I;
    'all into the first batch',              I - (b - 1) * slab;
    'batches reversed',                      I + (B + 1 - 2 * b) * slab;
    'one entry of the last batch into the first', [I(1:end-1), I(end) - (B - 1) * slab];
  };
  for k = 1:size(cases, 1)
    indx = reshape(cases{k, 2}, size(Y));
    what = [cases{k, 1} ', ' cls{1}];
    Z = zeros(sz, cls{1});
    Z(indx) = Y;
    check(isequal(poolkit.maxunpool(Y, indx, s), Z), 'maxunpool, %s', what);
    dX = zeros(sz, cls{1});
    for i = 1:numel(indx)
      dX(indx(i)) += Y(i);
    end
    check_close(poolkit.maxpool_backward(Y, indx, s), dX, 0, ['maxpool_backward, ' what]);
  end
  % invalid entries in batches 5 and 3: the one of batch 3 is reported, by both scatters
  bad = I;
  first = find(b == 3, 1) + 4;
  bad(find(b == 5, 1)) = 0.5;
  bad(first) = numel(X) + 1;
  want = sprintf('entry %d is not', first);
  for f = {@() poolkit.maxunpool(Y, bad, s), @() poolkit.maxpool_backward(Y, bad, s)}
    try
      f{1}();
      check(false, 'an invalid entry was not refused (%s)', cls{1});
    catch err
      check(strcmp(err.identifier, 'poolkit:badIndex') && ~isempty(strfind(err.message, want)), ...
            'invalid entry: %s (%s), expected ''%s''', err.message, err.identifier, want);
    end
  end
end
end
