function test_linear_blocks()
%TEST_LINEAR_BLOCKS  The scatters of linear indices where the output is the source's size times whole factors,
% the first one 2 (maxpool's 2x2 windows of stride 2): maxunpool and maxpool_backward write each output cell
% once from the one source whose block holds it, and fall back to the scatter when an index leaves its block;
% maxunpool_backward's gather dZ(indx) takes each value from the cells of its block likewise, or falls back.
% Every case against Octave's own indexing (Z(indx) = X; dX(indx(i)) += dY(i) in order, from +0; dZ(indx)),
% compared bit for bit (a -0 gradient becomes +0, a -0 value stays -0, NaN stays NaN): indices from maxpool over several
% dimensions (columns split between threads mid-dimension), a batch of one, values -0 and NaN, two indices
% swapped between neighbouring blocks, one index naming another block's cell and one repeated, an invalid entry,
% and shapes the blocks do not take (odd first dimension, first dimension not pooled). pkmex('block_scatters')
% and pkmex('block_gathers') count the calls done by blocks: each case checks it took the route it should.
randn('seed', 7);
o = {'Stride', 2, 'DataFormat', 'SSCB'};
for cls = {'single', 'double'}
  for sz = {[32 20 3 5], [16 8 1], [8 2 1 1]}
    X = cast(randn(sz{1}), cls{1});
    X(3) = -0;
    X(1:2) = -5;  % (the first window's maximum not at its first cell)
    [Y, I, s] = poolkit.maxpool(X, [2 2], o{:});
    Y(1) = -0;
    Y(end) = NaN;
    what = sprintf('%s [%s]', cls{1}, num2str(sz{1}));
    same_scatter(Y, I, s, cls{1}, ['from maxpool, ' what], 2);
    swapped = I;
    swapped([1 2]) = I([2 1]);  % each names a cell of the other's block
    same_scatter(Y, swapped, s, cls{1}, ['two swapped, ' what], 0);
    other = I;
    other(end) = I(1);  % a cell of the first block, twice
    same_scatter(Y, other, s, cls{1}, ['one repeated, ' what], 0);
    bad = I;
    bad(end) = 0;
    for f = {@() poolkit.maxunpool(Y, bad, s), @() poolkit.maxpool_backward(Y, bad, s), ...
             @() poolkit.maxunpool_backward(X, bad)}
      try
        f{1}();
        check(false, 'an invalid entry was not refused (%s)', what);
      catch err
        check(strcmp(err.identifier, 'poolkit:badIndex') && ...
              ~isempty(strfind(err.message, sprintf('entry %d is not', numel(I)))), ...
              'invalid entry: %s (%s)', err.message, err.identifier);
      end
    end
  end
  % shapes the blocks leave to the scatter: a first dimension of 6 (not whole groups of 8), one not pooled
  X = cast(randn(6, 8, 2, 2), cls{1});
  [Y, I, s] = poolkit.maxpool(X, [2 2], o{:});
  same_scatter(Y, I, s, cls{1}, ['first dimension 6, ' cls{1}], 0);
  X = cast(randn(16, 8, 2, 2), cls{1});
  [Y, I, s] = poolkit.maxpool(X, [1 2], 'Stride', [1 2], 'DataFormat', 'SSCB');
  same_scatter(Y, I, s, cls{1}, ['first dimension not pooled, ' cls{1}], 0);
end
end

% Both scatters of Y at indx, and the gather dZ(indx) from an array of size s, against Octave's; `blocks` of the
% two scatters done by blocks (and the gather with them).
function same_scatter(Y, indx, s, cls, what, blocks)
before = poolkit.pkmex('block_scatters');
gathers = poolkit.pkmex('block_gathers');
Z = zeros(s, cls);
Z(indx) = Y;
check(isequal(bits(poolkit.maxunpool(Y, indx, s)), bits(Z)), 'maxunpool, %s', what);
dX = zeros(s, cls);
for i = 1:numel(indx)
  dX(indx(i)) += Y(i);
end
check(isequal(bits(poolkit.maxpool_backward(Y, indx, s)), bits(dX)), 'maxpool_backward, %s', what);
check(poolkit.pkmex('block_scatters') - before == blocks, '%s: %d of 2 by blocks, expected %d', what, ...
      poolkit.pkmex('block_scatters') - before, blocks);
dZ = cast(randn(s), cls);
dZ(indx(1)) = -0;
dZ(indx(end)) = NaN;
check(isequal(bits(poolkit.maxunpool_backward(dZ, indx)), bits(dZ(indx))), 'maxunpool_backward, %s', what);
check(poolkit.pkmex('block_gathers') - gathers == (blocks > 0), '%s: the gather by blocks %d times, expected %d', ...
      what, poolkit.pkmex('block_gathers') - gathers, blocks > 0);
end

function b = bits(a)
if isa(a, 'single'), b = typecast(a(:), 'uint32'); else, b = typecast(a(:), 'uint64'); end
end
