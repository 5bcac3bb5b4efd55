function test_fixtures()
%TEST_FIXTURES  Every option against PyTorch's results (fixtures.mat, see make_fixtures.py): Y, indx and the
% gradient of sum(Y .* G) through each index form; DataFormats SSCB, BSSC, CSSB, SCB, SSSCB, CBT (PoolFormat T),
% SSCBT, BSSSC; padding scalar, vector, 2-by-N, 'same'; 'global'; PaddingValue 0 and 'mean'; single and double.
f = load(fullfile(fileparts(mfilename('fullpath')), 'fixtures.mat'));
names = fieldnames(f.cases);
for k = 1:numel(names)
  c = f.cases.(names{k});
  what = names{k};
  x = cast(c.X, c.class);
  tol = 1e-12; if strcmp(c.class, 'single'), tol = 2e-6; end
  if strcmp(c.op, 'maxpool')
    [Y, I, s] = poolkit.maxpool(x, c.poolsize, c.args{:});
    check_close(Y, cast(c.Y, c.class), 0, [what ' Y']);
    check(isequal(I, c.indx) && isa(I, 'double'), '%s: indx differs', what);
    check_close(poolkit.maxpool_backward(cast(c.G, c.class), I, s), cast(c.dX, c.class), tol, [what ' dX']);
    [Yc, Ic, info] = poolkit.maxpool(x, c.poolsize, c.args{:}, 'Indices', 'compact');
    check_close(Yc, Y, 0, [what ' Y compact']);
    check_close(poolkit.maxpool_backward(cast(c.G, c.class), Ic, info), cast(c.dX, c.class), tol, [what ' dX compact']);
    Z = poolkit.maxunpool(Y, I, s);
    check_close(poolkit.maxunpool(Yc, Ic, info), Z, 0, [what ' maxunpool compact']);
    check_close(poolkit.maxunpool_backward(x, Ic, info), x(I), 0, [what ' maxunpool_backward compact']);
  else
    Y = poolkit.avgpool(x, c.poolsize, c.args{:});
    check_close(Y, c.Y, tol, [what ' Y']);
    dX = poolkit.avgpool_backward(cast(c.G, c.class), size(x), c.poolsize, c.args{:});
    check_close(dX, c.dX, tol, [what ' dX']);
  end
end
end
